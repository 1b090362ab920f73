# libcore: libautotune, the C++ core (no Slurm headers), built as convenience libraries that the
# plugins, tools and libssp fold in, so each target links only what it needs.
#   libcore/libautotune.la   options, configuration, autotune.conf, C API   (SQLite, Eigen)
# Each area of the core adds its sources in a fragment of its own below.
noinst_LTLIBRARIES += libcore/libautotune.la
libcore_libautotune_la_SOURCES = \
	libcore/include/autotune/autotune.h \
	libcore/include/autotune/conf.hpp \
	libcore/include/autotune/config.hpp \
	libcore/include/autotune/error.hpp \
	libcore/include/autotune/log.hpp \
	libcore/include/autotune/names.hpp \
	libcore/include/autotune/units.hpp \
	libcore/capi.cc \
	libcore/conf.cc \
	libcore/config.cc \
	libcore/error.cc \
	libcore/log.cc \
	libcore/names.cc \
	libcore/units.cc
libcore_libautotune_la_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(SQLITE_CFLAGS)
libcore_libautotune_la_LIBADD = $(SQLITE_LIBS)

# Unit tests of the core (make check).
check_PROGRAMS += tests/unit/core_test
tests_unit_core_test_SOURCES = \
	tests/unit/capi_test.cc \
	tests/unit/conf_test.cc \
	tests/unit/config_test.cc \
	tests/unit/names_test.cc \
	tests/unit/units_test.cc
tests_unit_core_test_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(GTEST_CFLAGS) $(GMOCK_CFLAGS)
tests_unit_core_test_LDADD = libcore/libautotune.la $(GMOCK_LIBS) $(GTEST_LIBS)
TESTS += tests/unit/core_test

include libcore/engine.mk
