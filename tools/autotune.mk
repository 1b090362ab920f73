# tools/autotune: the command-line tool.  A small dispatcher (autotune.cc) and one file per
# command (cmd_<name>.cc, declared in commands.hpp); the option parser is shared (cli.cc).
bin_PROGRAMS += tools/autotune
tools_autotune_SOURCES = tools/autotune.cc tools/commands.hpp tools/cli.cc tools/cli.hpp \
	tools/cmd_replay.cc
tools_autotune_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(JSON_CFLAGS)
tools_autotune_LDADD = libcore/libautotune.la

# The dispatcher and replay's handling of bad input, as a user runs them.
TESTS += tests/unit/replay_cli.sh
EXTRA_DIST += tests/unit/replay_cli.sh
