# policy/: what the project decides for a class: the tuner (tuner.hpp: decide, refit,
# convergence, hysteresis, drift), the class's settings (class_extra.hpp), Slurm's partition and
# accounting limits (limits.hpp), the per-role adjuster (adjust.hpp), and the in-allocation
# search of steps mode (steps.hpp).  It proposes through a ProposeFn its caller gives it
# (engine/design.hpp), so it links the model only where the caller does.
noinst_LTLIBRARIES += policy/libautotune_policy.la
policy_libautotune_policy_la_SOURCES = \
	policy/include/autotune/adjust.hpp \
	policy/include/autotune/class_extra.hpp \
	policy/include/autotune/limits.hpp \
	policy/include/autotune/retention.hpp \
	policy/include/autotune/steps.hpp \
	policy/include/autotune/tuner.hpp \
	policy/adjust.cc \
	policy/class_extra.cc \
	policy/limits.cc \
	policy/retention.cc \
	policy/steps.cc \
	policy/tuner.cc
policy_libautotune_policy_la_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(SQLITE_CFLAGS) $(JSON_CFLAGS)

# Unit tests of the policy (make check).
check_PROGRAMS += tests/unit/policy_test
tests_unit_policy_test_SOURCES = \
	tests/unit/class_extra_test.cc \
	tests/unit/limits_test.cc \
	tests/unit/retention_test.cc \
	tests/unit/tuner_test.cc
tests_unit_policy_test_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(SQLITE_CFLAGS) $(JSON_CFLAGS) $(GTEST_CFLAGS)
tests_unit_policy_test_LDADD = $(AT_SUBMIT_API) $(AT_CAPI) $(AT_ALL) $(GTEST_LIBS)
TESTS += tests/unit/policy_test

check_PROGRAMS += tests/unit/steps_test
tests_unit_steps_test_SOURCES = \
	tests/unit/adjust_test.cc \
	tests/unit/conf_error.hpp \
	tests/unit/steps_test.cc \
	tests/unit/billing_test.cc \
	tests/unit/submit_fixture.hpp
tests_unit_steps_test_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(SQLITE_CFLAGS) $(JSON_CFLAGS) $(GTEST_CFLAGS)
tests_unit_steps_test_LDADD = $(AT_SUBMIT_API) $(AT_CAPI) $(AT_ALL) $(GTEST_LIBS)
TESTS += tests/unit/steps_test
