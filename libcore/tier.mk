# libcore/tier.mk: the tier store (objects split across persistent memory and disk) and the
# burst buffers of Slurm jobs built on it, as a convenience library of its own so that libpmem2,
# libxxhash and hwloc are linked only into what uses the store (autotune-bb, its tests and
# benchmark, libssp), never into the Slurm plugins.
#   libcore/libautotune_tier.la   autotune/tier.hpp, autotune/job_buffer.hpp
# The parsing of the Tier keys of autotune.conf (no libpmem2) is part of libautotune.la.
# Link both, the tier library first:  foo_LDADD = libcore/libautotune_tier.la libcore/libautotune.la
# (the tier library does not fold libautotune.la in, so that a shared library linking both
# convenience libraries gets each object once).
libcore_libautotune_la_SOURCES += \
	libcore/include/autotune/tier_conf.hpp \
	libcore/tier_conf.cc

noinst_LTLIBRARIES += libcore/libautotune_tier.la
libcore_libautotune_tier_la_SOURCES = \
	libcore/include/autotune/job_buffer.hpp \
	libcore/include/autotune/tier.hpp \
	libcore/tier/fs.cc \
	libcore/tier/fs.hpp \
	libcore/tier/job_buffer.cc \
	libcore/tier/media.cc \
	libcore/tier/media.hpp \
	libcore/tier/placement.cc \
	libcore/tier/placement.hpp \
	libcore/tier/pmem_map.cc \
	libcore/tier/pmem_map.hpp \
	libcore/tier/record.cc \
	libcore/tier/record.hpp \
	libcore/tier/store.cc
libcore_libautotune_tier_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/libcore \
	$(PMEM2_CFLAGS) $(XXHASH_CFLAGS) $(HWLOC_CFLAGS)
libcore_libautotune_tier_la_LIBADD = $(PMEM2_LIBS) $(XXHASH_LIBS) $(HWLOC_LIBS) $(PTHREAD_LIBS)

# Unit tests of the tier store (make check): real files in /dev/shm and the local disk, real
# libpmem2 mappings.  tier_crash_test kills writers with SIGKILL and checks what survives.
check_PROGRAMS += tests/unit/tier_test tests/unit/tier_crash_test
TESTS += tests/unit/tier_test tests/unit/tier_crash_test
TIER_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/libcore $(GTEST_CFLAGS)
TIER_TEST_LDADD = libcore/libautotune_tier.la libcore/libautotune.la $(GTEST_LIBS) $(PTHREAD_LIBS)
tests_unit_tier_test_SOURCES = tests/unit/tier_test.cc
tests_unit_tier_test_CPPFLAGS = $(TIER_TEST_CPPFLAGS)
tests_unit_tier_test_LDADD = $(TIER_TEST_LDADD)
tests_unit_tier_crash_test_SOURCES = tests/unit/tier_crash_test.cc
tests_unit_tier_crash_test_CPPFLAGS = $(TIER_TEST_CPPFLAGS)
tests_unit_tier_crash_test_LDADD = $(TIER_TEST_LDADD)
