# engine/: the tuning engine, as two libraries, so that a program that never fits a model does
# not load one (slurmctld's job_submit plugin creates classes and their initial designs only):
#   engine/libautotune_search.la  the search problem without a model: configurations, the
#                                 configuration space, candidate encoding, the gamma objective,
#                                 stopping rules, strategies, the engine's autotune.conf section,
#                                 the initial design (design.hpp: propose_design), and workflow
#                                 files and their stages (workflow.hpp)
#   engine/libautotune_engine.la  the model and everything that proposes with it: the Gaussian
#                                 process, expected improvement, propose(), vectorized exp/erfc
#                                 (libmvec), CSV tables, offline replay, and the search of a
#                                 workflow's configurations (workflow_search.hpp)
# The second needs the first; neither folds the other in.
noinst_LTLIBRARIES += engine/libautotune_search.la
engine_libautotune_search_la_SOURCES = \
	engine/include/autotune/candidates.hpp \
	engine/include/autotune/config.hpp \
	engine/include/autotune/design.hpp \
	engine/include/autotune/engine_conf.hpp \
	engine/include/autotune/gp_options.hpp \
	engine/include/autotune/objective.hpp \
	engine/include/autotune/observation.hpp \
	engine/include/autotune/space.hpp \
	engine/include/autotune/stopping.hpp \
	engine/include/autotune/strategy.hpp \
	engine/include/autotune/workflow.hpp \
	engine/candidates.cc \
	engine/config.cc \
	engine/cpu_variants.hpp \
	engine/design.cc \
	engine/engine_conf.cc \
	engine/objective.cc \
	engine/space.cc \
	engine/stopping.cc \
	engine/strategy.cc \
	engine/workflow.cc
engine_libautotune_search_la_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(JSON_CFLAGS) -DEIGEN_NO_DEBUG

noinst_LTLIBRARIES += engine/libautotune_engine.la
engine_libautotune_engine_la_SOURCES = \
	engine/include/autotune/acquisition.hpp \
	engine/include/autotune/dense.hpp \
	engine/include/autotune/gp.hpp \
	engine/include/autotune/history.hpp \
	engine/include/autotune/optimizer.hpp \
	engine/include/autotune/replay.hpp \
	engine/include/autotune/run_time_model.hpp \
	engine/include/autotune/table.hpp \
	engine/include/autotune/vector_math.hpp \
	engine/include/autotune/workflow_replay.hpp \
	engine/include/autotune/workflow_search.hpp \
	engine/acquisition.cc \
	engine/dense.cc \
	engine/dense_kernels.hpp \
	engine/dense_loops.hpp \
	engine/gp.cc \
	engine/history.cc \
	engine/optimizer.cc \
	engine/replay.cc \
	engine/run_time_model.cc \
	engine/table.cc \
	engine/vector_math.cc \
	engine/workflow_replay.cc \
	engine/workflow_search.cc
# Eigen's internal index checks slow the inner loops of the proposal step; the engine checks
# its shapes at its own edges.
engine_libautotune_engine_la_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) -DEIGEN_NO_DEBUG
engine_libautotune_engine_la_LIBADD = $(MVEC_LIBS)

# dense.hpp's products a second time, for AVX2 and FMA (configure: --disable-dense-avx2), in a
# library of their own since no other file may be compiled for them.
if DENSE_AVX2
noinst_LTLIBRARIES += engine/libautotune_dense_avx2.la
engine_libautotune_dense_avx2_la_SOURCES = engine/dense_avx2.cc engine/dense_kernels.hpp
engine_libautotune_dense_avx2_la_CPPFLAGS = -I$(top_srcdir)/engine $(EIGEN_SYSTEM_CPPFLAGS) -DEIGEN_NO_DEBUG
engine_libautotune_dense_avx2_la_CXXFLAGS = $(AM_CXXFLAGS) $(DENSE_AVX2_CXXFLAGS)
engine_libautotune_engine_la_LIBADD += engine/libautotune_dense_avx2.la
endif

# Unit tests of the engine (make check): one binary, well under a minute.
check_PROGRAMS += tests/unit/engine_test
tests_unit_engine_test_SOURCES = \
	tests/unit/acquisition_test.cc \
	tests/unit/conf_error.hpp \
	tests/unit/config_test.cc \
	tests/unit/dense_test.cc \
	tests/unit/engine_conf_test.cc \
	tests/unit/gp_test.cc \
	tests/unit/history_test.cc \
	tests/unit/objective_test.cc \
	tests/unit/optimizer_test.cc \
	tests/unit/replay_test.cc \
	tests/unit/run_time_model_test.cc \
	tests/unit/space_test.cc \
	tests/unit/stopping_test.cc \
	tests/unit/vector_math_test.cc \
	tests/unit/workflow_search_test.cc \
	tests/unit/workflow_test.cc
tests_unit_engine_test_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(GTEST_CFLAGS)
tests_unit_engine_test_LDADD = $(AT_ENGINE) $(AT_CONF_LIBS) $(GTEST_LIBS)
TESTS += tests/unit/engine_test
