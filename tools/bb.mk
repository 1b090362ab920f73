# tools/bb.mk: autotune-bb, the burst-buffer command (etc/burst_buffer.lua calls it), its man
# page, and burst_buffer.lua installed with the path of the installed autotune-bb.
# One file per command (tools/bb/cmd_*.cc), as `autotune' is; the command line is read with the
# tools' parser (tools/args.cc).
bin_PROGRAMS += tools/autotune-bb
tools_autotune_bb_SOURCES = \
	tools/args.cc tools/args.hpp \
	tools/bb/buffer.cc tools/bb/buffer.hpp \
	tools/bb/cmd_create.cc \
	tools/bb/cmd_destroy.cc \
	tools/bb/cmd_get.cc \
	tools/bb/cmd_ls.cc \
	tools/bb/cmd_pools.cc \
	tools/bb/cmd_put.cc \
	tools/bb/cmd_rm.cc \
	tools/bb/cmd_stage_in.cc \
	tools/bb/cmd_stage_out.cc \
	tools/bb/cmd_status.cc \
	tools/bb/commands.hpp \
	tools/bb/files.cc tools/bb/files.hpp \
	tools/bb/main.cc
tools_autotune_bb_LDADD = $(AT_TIER) $(AT_CONF_LIBS) $(PTHREAD_LIBS)
tools_autotune_bb_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS)
dist_man_MANS += man/autotune-bb.1

# $(pkgdatadir)/burst_buffer.lua: copy it beside slurm.conf to enable the burst buffer.
pkgdata_DATA = tools/burst_buffer.lua
CLEANFILES += tools/burst_buffer.lua
EXTRA_DIST += etc/burst_buffer.lua
tools/burst_buffer.lua: $(srcdir)/etc/burst_buffer.lua Makefile
	$(AM_V_GEN)$(MKDIR_P) tools && \
	sed -e 's|^local autotune_bb = .*|local autotune_bb = "$(bindir)/autotune-bb"|' \
	  $(srcdir)/etc/burst_buffer.lua > $@.tmp && mv $@.tmp $@

# Tests (make check): autotune-bb's bad inputs and, as root, a buffer of an unprivileged user;
# burst_buffer.lua's directives under Lua 5.1.
TESTS += tests/unit/autotune_bb.sh tests/unit/burst_buffer_lua.sh
EXTRA_DIST += tests/unit/autotune_bb.sh tests/unit/burst_buffer_lua.sh
