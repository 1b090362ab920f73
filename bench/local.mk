# bench: benchmark programs (built with `make', never part of `make check' or scripts/test).
# bench/ssp_straggler.sh runs the logistic-regression comparisons (examples/logreg against
# examples/logreg_allreduce); bench/ssp_ps_bench measures get/inc throughput per server rank.
noinst_PROGRAMS += bench/ssp_ps_bench
bench_ssp_ps_bench_SOURCES = bench/ssp_ps_bench.cc
bench_ssp_ps_bench_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/libssp/include $(MPI_CPPFLAGS)
bench_ssp_ps_bench_LDFLAGS = $(NO_WRAPPER_FLAGS)
bench_ssp_ps_bench_LDADD = examples/libexamples.la libssp/libssp.la $(MPI_LIBS)
# bench/gemm_rate: the single-core GEMM rate on examples/mlp's shapes against its gradient.
noinst_PROGRAMS += bench/gemm_rate
bench_gemm_rate_SOURCES = bench/gemm_rate.cc
bench_gemm_rate_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/libssp/include $(MPI_CPPFLAGS) $(EIGEN_SYSTEM_CPPFLAGS) -DEIGEN_NO_DEBUG
bench_gemm_rate_CXXFLAGS = $(AM_CXXFLAGS) $(EXAMPLES_ARCH_CXXFLAGS)
bench_gemm_rate_LDFLAGS = $(NO_WRAPPER_FLAGS)
bench_gemm_rate_LDADD = examples/libmlp.la examples/libexamples.la libssp/libssp.la $(MPI_LIBS)
# bench/ssp_vs_ddp: libssp against PyTorch DDP (bench/ssp_vs_ddp_torch.py) on mlp and mf.
EXTRA_DIST += bench/ssp_vs_ddp bench/ssp_vs_ddp_torch.py
EXTRA_DIST += bench/ssp_straggler.sh bench/submit bench/steps bench/synthetic-table bench/shuffle-table bench/generated-table bench/engine-cv bench/benchcli.py bench/README.md \
	bench/replay-identical bench/history-splits bench/store-scale bench/site-overhead bench/workflow-replay bench/workflow-slurm \
	bench/sklearn-bo bench/structured-search

include bench/tier.mk
include bench/engine.mk

# at_submit() in process on a real store: the plugin's own cost per job (bench/submit measures it
# inside slurmctld).
noinst_PROGRAMS += bench/at_submit_bench
bench_at_submit_bench_SOURCES = bench/at_submit_bench.cc
bench_at_submit_bench_CPPFLAGS = $(AM_CPPFLAGS)
bench_at_submit_bench_LDADD = $(AT_SUBMIT_API) $(AT_CAPI) $(AT_ALL) $(PTHREAD_LIBS)

include bench/ckpt.mk

# A year of a busy site's store (bench/store-scale): fills a store and times job_submit, ingest
# plus refit, and retention on it.
noinst_PROGRAMS += bench/store_scale
bench_store_scale_SOURCES = bench/store_scale.cc
bench_store_scale_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(SQLITE_CFLAGS)
bench_store_scale_LDADD = $(AT_SUBMIT_API) $(AT_CAPI) $(AT_ALL) $(SQLITE_LIBS) $(PTHREAD_LIBS)
