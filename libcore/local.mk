# libcore: libautotune, the C++ core (no Slurm headers), built as convenience libraries that the
# plugins, tools and libssp fold in, so each target links only what it needs.
#   libcore/libautotune.la   options, configuration, autotune.conf, profile store, C API
#                            (SQLite, Eigen, nlohmann-json)
# Each area of the core adds its sources in a fragment of its own below.
noinst_LTLIBRARIES += libcore/libautotune.la
libcore_libautotune_la_SOURCES = \
	libcore/include/autotune/autotune.h \
	libcore/include/autotune/conf.hpp \
	libcore/include/autotune/config.hpp \
	libcore/include/autotune/error.hpp \
	libcore/include/autotune/log.hpp \
	libcore/include/autotune/names.hpp \
	libcore/include/autotune/result.hpp \
	libcore/include/autotune/store.hpp \
	libcore/include/autotune/tuner.hpp \
	libcore/include/autotune/tuner_conf.hpp \
	libcore/include/autotune/units.hpp \
	libcore/capi.cc \
	libcore/capi_internal.hpp \
	libcore/conf.cc \
	libcore/config.cc \
	libcore/error.cc \
	libcore/log.cc \
	libcore/names.cc \
	libcore/result.cc \
	libcore/select_api.cc \
	libcore/sqlite.cc \
	libcore/sqlite.hpp \
	libcore/store.cc \
	libcore/submit.cc \
	libcore/tuner.cc \
	libcore/tuner_conf.cc \
	libcore/units.cc
libcore_libautotune_la_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(SQLITE_CFLAGS) $(JSON_CFLAGS)
libcore_libautotune_la_LIBADD = $(SQLITE_LIBS) $(MVEC_LIBS)

# Unit tests of the core (make check).
check_PROGRAMS += tests/unit/core_test
tests_unit_core_test_SOURCES = \
	tests/unit/capi_test.cc \
	tests/unit/conf_error.hpp \
	tests/unit/conf_test.cc \
	tests/unit/limits_test.cc \
	tests/unit/config_test.cc \
	tests/unit/names_test.cc \
	tests/unit/result_test.cc \
	tests/unit/store_test.cc \
	tests/unit/submit_fixture.hpp \
	tests/unit/submit_test.cc \
	tests/unit/tuner_test.cc \
	tests/unit/units_test.cc
tests_unit_core_test_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(SQLITE_CFLAGS) $(JSON_CFLAGS) \
	$(GTEST_CFLAGS) $(GMOCK_CFLAGS)
tests_unit_core_test_LDADD = libcore/libautotune.la $(GMOCK_LIBS) $(GTEST_LIBS)
TESTS += tests/unit/core_test tests/unit/store_concurrency.sh
EXTRA_DIST += tests/unit/fixtures tests/unit/store_concurrency.sh
check_PROGRAMS += tests/unit/store_stress
tests_unit_store_stress_SOURCES = tests/unit/store_stress.cc
tests_unit_store_stress_LDADD = libcore/libautotune.la
# A fixture generator for the tests of the `autotune` command (built with `make').
noinst_PROGRAMS += tests/unit/store_fill
tests_unit_store_fill_SOURCES = tests/unit/store_fill.cc
tests_unit_store_fill_LDADD = libcore/libautotune.la

include libcore/tier.mk
include libcore/engine.mk
include libcore/steps.mk
