# libcore: in-allocation tuning (steps mode): the search a job runs inside its allocation, and
# per-role resource adjustment from measured use; their unit tests.
libcore_libautotune_la_SOURCES += \
	libcore/include/autotune/adjust.hpp \
	libcore/include/autotune/steps.hpp \
	libcore/adjust.cc \
	libcore/steps.cc

check_PROGRAMS += tests/unit/steps_test
tests_unit_steps_test_SOURCES = \
	tests/unit/adjust_test.cc \
	tests/unit/conf_error.hpp \
	tests/unit/steps_test.cc \
	tests/unit/billing_test.cc \
	tests/unit/submit_fixture.hpp
tests_unit_steps_test_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(SQLITE_CFLAGS) $(JSON_CFLAGS) $(GTEST_CFLAGS)
tests_unit_steps_test_LDADD = libcore/libautotune.la $(GTEST_LIBS)
TESTS += tests/unit/steps_test
