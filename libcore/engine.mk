# libcore: the tuning engine (configuration space, Gaussian process, expected improvement,
# stopping rules, the gamma objective, CSV tables and offline replay) and its unit tests.
libcore_libautotune_la_SOURCES += \
	libcore/include/autotune/acquisition.hpp \
	libcore/include/autotune/candidates.hpp \
	libcore/include/autotune/engine_conf.hpp \
	libcore/include/autotune/gp.hpp \
	libcore/include/autotune/objective.hpp \
	libcore/include/autotune/observation.hpp \
	libcore/include/autotune/optimizer.hpp \
	libcore/include/autotune/replay.hpp \
	libcore/include/autotune/rng.hpp \
	libcore/include/autotune/space.hpp \
	libcore/include/autotune/stopping.hpp \
	libcore/include/autotune/strategy.hpp \
	libcore/include/autotune/table.hpp \
	libcore/include/autotune/vector_math.hpp \
	libcore/acquisition.cc \
	libcore/candidates.cc \
	libcore/engine_conf.cc \
	libcore/gp.cc \
	libcore/objective.cc \
	libcore/optimizer.cc \
	libcore/replay.cc \
	libcore/space.cc \
	libcore/stopping.cc \
	libcore/strategy.cc \
	libcore/table.cc \
	libcore/vector_math.cc
# Eigen's internal index checks slow the inner loops of the proposal step; the engine checks
# its shapes at its own edges.
libcore_libautotune_la_CPPFLAGS += -DEIGEN_NO_DEBUG

# Unit tests of the engine (make check): one binary, well under a minute.
check_PROGRAMS += tests/unit/engine_test
tests_unit_engine_test_SOURCES = \
	tests/unit/acquisition_test.cc \
	tests/unit/conf_error.hpp \
	tests/unit/engine_conf_test.cc \
	tests/unit/gp_test.cc \
	tests/unit/objective_test.cc \
	tests/unit/optimizer_test.cc \
	tests/unit/replay_test.cc \
	tests/unit/space_test.cc \
	tests/unit/stopping_test.cc \
	tests/unit/vector_math_test.cc
tests_unit_engine_test_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(GTEST_CFLAGS)
tests_unit_engine_test_LDADD = libcore/libautotune.la $(GTEST_LIBS)
TESTS += tests/unit/engine_test
