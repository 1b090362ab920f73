# tools: autotune (status, show, report, export, forget, admin, ...), autotune-run, autotune-bb.
bin_PROGRAMS += tools/autotune
tools_autotune_SOURCES = \
	tools/args.cc tools/args.hpp \
	tools/autotune.cc \
	tools/cli.cc tools/cli.hpp \
	tools/cmd_admin.cc \
	tools/cmd_ingest.cc \
	tools/cmd_replay.cc \
	tools/cmd_replay_workflow.cc \
	tools/replay_args.cc tools/replay_args.hpp \
	tools/cmd_show.cc \
	tools/cmd_status.cc \
	tools/cmd_workflow.cc \
	tools/commands.hpp \
	tools/explain.cc tools/explain.hpp \
	tools/slurm_job.cc tools/slurm_job.hpp \
	tools/views.cc tools/views.hpp \
	tools/workflow_plan.cc tools/workflow_plan.hpp
# When setuid, autotune reads autotune.conf and slurm.conf from the configure-time sysconfdir only.
tools_autotune_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(SQLITE_CFLAGS) $(EIGEN_CFLAGS) \
	-DAUTOTUNE_SYSCONFDIR='"$(sysconfdir)"'
tools_autotune_LDADD = $(AT_ALL) $(SLURM_LIBS)

# The setuid rules of tools/cli.cc: trusted paths (symbolic links included), dropping privileges.
check_PROGRAMS += tests/unit/cli_test
tests_unit_cli_test_SOURCES = tests/unit/cli_test.cc tools/cli.cc tools/args.cc
tests_unit_cli_test_CPPFLAGS = $(tools_autotune_CPPFLAGS) -I$(top_srcdir)/tools $(GTEST_CFLAGS)
tests_unit_cli_test_LDADD = $(AT_ALL) $(GTEST_LIBS)
TESTS += tests/unit/cli_test

# The dispatcher and replay's handling of bad input, as a user runs them.
TESTS += tests/unit/replay_cli.sh
EXTRA_DIST += tests/unit/replay_cli.sh
TESTS += tests/unit/replay_workflow_cli.sh
EXTRA_DIST += tests/unit/replay_workflow_cli.sh

# `autotune' is installed setuid to SlurmUser when `make install' runs as root without DESTDIR,
# so that users can read their own rows of a store they cannot open (see tools/cli.hpp).
install-exec-hook:
	@if test -z "$(DESTDIR)" && test "`id -u`" = 0; then \
	  echo " chown $(SLURM_USER) $(bindir)/autotune && chmod 4755 $(bindir)/autotune"; \
	  chown "$(SLURM_USER)" "$(bindir)/autotune" && chmod 4755 "$(bindir)/autotune"; \
	fi

bin_PROGRAMS += tools/autotune-run
tools_autotune_run_SOURCES = tools/autotune_run.cc tools/run_step.cc tools/run_step.hpp \
	tools/slurm_job.cc tools/slurm_job.hpp
tools_autotune_run_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) -DAUTOTUNE_PYTHONDIR='"$(AT_PYTHONDIR)"'
tools_autotune_run_LDADD = $(AT_ALL) $(SLURM_LIBS)

# How autotune-run runs an app without a configuration (make check).
check_PROGRAMS += tests/unit/run_step_test
tests_unit_run_step_test_SOURCES = tests/unit/run_step_test.cc tools/run_step.cc tools/run_step.hpp
tests_unit_run_step_test_CPPFLAGS = $(tools_autotune_run_CPPFLAGS) -I$(top_srcdir)/tools $(GTEST_CFLAGS)
tests_unit_run_step_test_LDADD = $(AT_ALL) $(GTEST_LIBS)
TESTS += tests/unit/run_step_test

dist_man_MANS += man/autotune.1 man/autotune-workflow.1

include tools/bb.mk
include tools/steps.mk
