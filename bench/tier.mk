# bench/tier.mk: tier_bench, put/get bandwidth of the tier store per placement policy against a
# plain write + fsync (the baseline) and a bare memcpy into the pmem mapping (the limit).
# Built with `make'; run by hand (see bench/README.md), never by `make check'.
noinst_PROGRAMS += bench/tier_bench
bench_tier_bench_SOURCES = bench/tier_bench.cc
bench_tier_bench_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(PMEM2_CFLAGS)
bench_tier_bench_LDADD = $(AT_TIER) $(AT_TIER_CONF) $(AT_COMMON) $(PTHREAD_LIBS)
