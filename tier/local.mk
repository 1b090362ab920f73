# tier/: storage tiers.  Two libraries, so that reading the tier keys never loads libpmem2:
#   tier/libautotune_tier_conf.la  the Tier keys of autotune.conf (TierConf, TierSiteConf); no
#                                  libpmem2 (the configuration library and the plugins use it)
#   tier/libautotune_tier.la       the tier store (objects split across persistent memory and
#                                  disk) and the burst buffers of Slurm jobs built on it (libpmem2,
#                                  libxxhash, hwloc): autotune-bb, libssp, their tests and bench
# Neither folds the other in: a consumer lists each library it links, once.
noinst_LTLIBRARIES += tier/libautotune_tier_conf.la
tier_libautotune_tier_conf_la_SOURCES = \
	tier/include/autotune/tier_conf.hpp \
	tier/tier_conf.cc

noinst_LTLIBRARIES += tier/libautotune_tier.la
tier_libautotune_tier_la_SOURCES = \
	tier/include/autotune/job_buffer.hpp \
	tier/include/autotune/tier.hpp \
	tier/fs.cc \
	tier/fs.hpp \
	tier/job_buffer.cc \
	tier/media.cc \
	tier/media.hpp \
	tier/placement.cc \
	tier/placement.hpp \
	tier/pmem_map.cc \
	tier/pmem_map.hpp \
	tier/record.cc \
	tier/record.hpp \
	tier/store.cc \
	tier/store_bandwidth.cc \
	tier/store_demote.cc \
	tier/store_impl.hpp \
	tier/store_list.cc \
	tier/store_open.cc \
	tier/store_pieces.cc \
	tier/store_read.cc \
	tier/store_scan.cc \
	tier/store_space.cc \
	tier/store_write.cc
tier_libautotune_tier_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(PMEM2_CFLAGS) $(XXHASH_CFLAGS) $(HWLOC_CFLAGS)
tier_libautotune_tier_la_LIBADD = $(PMEM2_LIBS) $(XXHASH_LIBS) $(HWLOC_LIBS) $(PTHREAD_LIBS)

# Unit tests of the tier store (make check): real files in /dev/shm and the local disk, real
# libpmem2 mappings.  tier_crash_test kills writers with SIGKILL and checks what survives.
# tier_root_test (burst buffers of jobs, chown to the job's user) runs as root, as CI runs it;
# as any other user it exits 77, reported as SKIP.  tier_probe_test slows its own fsync() to
# check the bandwidth probe on a disk with uneven flushes.
check_PROGRAMS += tests/unit/tier_test tests/unit/tier_crash_test tests/unit/tier_root_test \
	tests/unit/tier_probe_test
TESTS += tests/unit/tier_test tests/unit/tier_crash_test tests/unit/tier_root_test \
	tests/unit/tier_probe_test
TIER_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(EIGEN_CFLAGS) $(GTEST_CFLAGS)
TIER_TEST_LDADD = $(AT_TIER) $(AT_CONF_LIBS) $(GTEST_LIBS) $(PTHREAD_LIBS)
tests_unit_tier_test_SOURCES = tests/unit/tier_test.cc tests/unit/tier_test_util.hpp
tests_unit_tier_test_CPPFLAGS = $(TIER_TEST_CPPFLAGS)
tests_unit_tier_test_LDADD = $(TIER_TEST_LDADD)
tests_unit_tier_crash_test_SOURCES = tests/unit/tier_crash_test.cc
tests_unit_tier_crash_test_CPPFLAGS = $(TIER_TEST_CPPFLAGS)
tests_unit_tier_crash_test_LDADD = $(TIER_TEST_LDADD)
tests_unit_tier_root_test_SOURCES = tests/unit/tier_root_test.cc tests/unit/tier_test_util.hpp
tests_unit_tier_root_test_CPPFLAGS = $(TIER_TEST_CPPFLAGS)
tests_unit_tier_root_test_LDADD = $(TIER_TEST_LDADD)
tests_unit_tier_probe_test_SOURCES = tests/unit/tier_probe_test.cc tests/unit/tier_test_util.hpp
tests_unit_tier_probe_test_CPPFLAGS = $(TIER_TEST_CPPFLAGS)
tests_unit_tier_probe_test_LDADD = $(TIER_TEST_LDADD)
