# libssp: the staleness-bounded parameter server (MPI), installed as a shared library with its
# headers and ssp.pc, so that an MPI program builds with
#   mpicxx app.cc $(pkg-config --cflags --libs ssp)
# The MPI-free parts (policy, shard map, scheduler, codec, snapshot stores and manifest, profile
# format) are a convenience library of their own, which the unit tests link without MPI.  It folds
# in the tier store (TierSnapshotStore), the tier keys of autotune.conf and common/: no SQLite, no
# engine, no store (tests/unit/link_deps.sh checks).  libpmem2 comes only from the tier library,
# MPI only into libssp.la.
SSP_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/libssp/include -I$(top_srcdir)/libssp $(JSON_CFLAGS)

noinst_LTLIBRARIES += libssp/libssp_pure.la
libssp_libssp_pure_la_SOURCES = \
	libssp/codec.cc libssp/codec.hpp \
	libssp/consistency.cc \
	libssp/manifest.cc libssp/manifest.hpp \
	libssp/profile.cc libssp/profile.hpp \
	libssp/scheduler.cc libssp/scheduler.hpp \
	libssp/shard_map.cc libssp/shard_map.hpp \
	libssp/snapshot.cc \
	libssp/tier_store.cc
libssp_libssp_pure_la_CPPFLAGS = $(SSP_CPPFLAGS) $(ZLIB_CFLAGS)
libssp_libssp_pure_la_LIBADD = $(AT_TIER) $(AT_TIER_CONF) $(AT_COMMON) $(ZLIB_LIBS)

lib_LTLIBRARIES += libssp/libssp.la
libssp_libssp_la_SOURCES = \
	libssp/checkpoint.cc libssp/checkpoint.hpp \
	libssp/context.cc \
	libssp/coordinator.cc libssp/coordinator.hpp \
	libssp/profiling.cc libssp/profiling.hpp \
	libssp/protocol.hpp \
	libssp/server.cc libssp/server.hpp \
	libssp/tables.cc libssp/tables.hpp \
	libssp/transport.cc libssp/transport.hpp \
	libssp/worker.cc libssp/worker.hpp
libssp_libssp_la_CPPFLAGS = $(SSP_CPPFLAGS) $(MPI_CPPFLAGS)
libssp_libssp_la_LDFLAGS = -version-info 0:0:0
libssp_libssp_la_LIBADD = libssp/libssp_pure.la $(MPI_LIBS)

sspincludedir = $(includedir)/ssp
sspinclude_HEADERS = \
	libssp/include/ssp/consistency.hpp \
	libssp/include/ssp/context.hpp \
	libssp/include/ssp/error.hpp \
	libssp/include/ssp/job.hpp \
	libssp/include/ssp/options.hpp \
	libssp/include/ssp/profile.hpp \
	libssp/include/ssp/snapshot.hpp \
	libssp/include/ssp/ssp.hpp \
	libssp/include/ssp/table.hpp \
	libssp/include/ssp/tier_store.hpp
# ssp/error.hpp names autotune::Error and ssp/tier_store.hpp autotune::TierStore: install those
# headers beside them.
sspautotunedir = $(includedir)/autotune
sspautotune_HEADERS = common/include/autotune/error.hpp \
	common/include/autotune/raw_conf.hpp \
	tier/include/autotune/tier.hpp \
	tier/include/autotune/tier_conf.hpp

pkgconfig_DATA += libssp/ssp.pc
EXTRA_DIST += libssp/ssp.pc.in libssp/README.md

# Unit tests of the MPI-free parts (make check).
check_PROGRAMS += tests/unit/ssp_test
tests_unit_ssp_test_SOURCES = \
	tests/unit/ssp_consistency_test.cc \
	tests/unit/ssp_profile_test.cc \
	tests/unit/ssp_scheduler_test.cc \
	tests/unit/ssp_shard_map_test.cc \
	tests/unit/ssp_snapshot_test.cc \
	tests/unit/ssp_tier_store_test.cc
tests_unit_ssp_test_CPPFLAGS = $(SSP_CPPFLAGS) $(GTEST_CFLAGS)
tests_unit_ssp_test_LDADD = libssp/libssp_pure.la $(GTEST_LIBS)
TESTS += tests/unit/ssp_test
