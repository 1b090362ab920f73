# tools: in-allocation tuning (steps mode): `autotune annotate' (the privileged AdminComment
# update of a job that shrank to its winner).
tools_autotune_SOURCES += tools/cmd_annotate.cc
# autotune-run's steps mode.
tools_autotune_run_SOURCES += tools/steps_mode.cc tools/steps_mode.hpp
tools_autotune_run_CPPFLAGS += $(EIGEN_CFLAGS)
