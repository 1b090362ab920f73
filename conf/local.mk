# conf/: autotune.conf as one typed, validated whole (Conf): the core, engine, tuner, tier and
# adjuster sections, unknown keys refused.  The tuner's and the adjuster's sections are parsed
# here; the engine's (engine/engine_conf.cc) and the tiers' (tier/tier_conf.cc) where their
# types live.  Link with $(AT_CONF_LIBS), which lists what it needs.
noinst_LTLIBRARIES += conf/libautotune_conf.la
conf_libautotune_conf_la_SOURCES = \
	conf/include/autotune/adjust_conf.hpp \
	conf/include/autotune/conf.hpp \
	conf/include/autotune/tuner_conf.hpp \
	conf/adjust_conf.cc \
	conf/conf.cc \
	conf/tuner_conf.cc
conf_libautotune_conf_la_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS)

# Unit tests of autotune.conf and the shared pieces below it (make check).
check_PROGRAMS += tests/unit/conf_test
tests_unit_conf_test_SOURCES = \
	tests/unit/conf_error.hpp \
	tests/unit/conf_test.cc \
	tests/unit/names_test.cc \
	tests/unit/units_test.cc
tests_unit_conf_test_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(GTEST_CFLAGS)
tests_unit_conf_test_LDADD = $(AT_CONF_LIBS) $(GTEST_LIBS)
TESTS += tests/unit/conf_test
