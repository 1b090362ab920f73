# bench/propose_bench: the time of one proposal step of the tuning engine (built by make, never
# run by make check; figures in bench/README.md).
noinst_PROGRAMS += bench/propose_bench
bench_propose_bench_SOURCES = bench/propose_bench.cc
bench_propose_bench_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS)
bench_propose_bench_LDADD = $(AT_ENGINE) $(AT_CONF_LIBS)

# bench/engine_diagnose: where a replayed search's budget goes (failures, the optimum's rank by
# EI, the fitted length scales, the model fitted on random measurements); figures in
# bench/README.md.
noinst_PROGRAMS += bench/engine_diagnose
bench_engine_diagnose_SOURCES = bench/engine_diagnose.cc
bench_engine_diagnose_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS)
bench_engine_diagnose_LDADD = $(AT_ENGINE) $(AT_CONF_LIBS)
