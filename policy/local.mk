# policy/: what the project decides for a class: the tuner (decide, refit, convergence,
# hysteresis, drift), class settings and Slurm's limits, the per-role adjuster, and the
# in-allocation search of steps mode.  It proposes through a ProposeFn its caller gives it
# (engine/design.hpp), so it links the model only where the caller does.
noinst_LTLIBRARIES += policy/libautotune_policy.la
policy_libautotune_policy_la_SOURCES = \
	policy/include/autotune/adjust.hpp \
	policy/include/autotune/steps.hpp \
	policy/include/autotune/tuner.hpp \
	policy/adjust.cc \
	policy/steps.cc \
	policy/tuner.cc
policy_libautotune_policy_la_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(SQLITE_CFLAGS) $(JSON_CFLAGS)

# Unit tests of the policy (make check).
check_PROGRAMS += tests/unit/policy_test
tests_unit_policy_test_SOURCES = \
	tests/unit/limits_test.cc \
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
