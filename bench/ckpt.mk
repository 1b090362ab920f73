# bench/ckpt.mk: ssp_ckpt_bench, a libssp checkpoint through the tier store (pmem + disk) against
# the same checkpoint into a plain directory with fsync (DirectorySnapshotStore).  Built with
# `make'; run by hand under mpirun (see bench/README.md), never by `make check'.
noinst_PROGRAMS += bench/ssp_ckpt_bench
bench_ssp_ckpt_bench_SOURCES = bench/ssp_ckpt_bench.cc
bench_ssp_ckpt_bench_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/libssp/include $(MPI_CPPFLAGS)
bench_ssp_ckpt_bench_LDFLAGS = $(NO_WRAPPER_FLAGS)
bench_ssp_ckpt_bench_LDADD = examples/libexamples.la libssp/libssp.la $(MPI_LIBS)
