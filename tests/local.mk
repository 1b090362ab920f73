# Unit tests (GoogleTest; `make check', no cluster needed) and the programs the MPI and
# integration tests run on the local cluster (scripts/test).
check_PROGRAMS += tests/unit/core_test
tests_unit_core_test_SOURCES = \
	tests/unit/names_test.cc \
	tests/unit/capi_test.cc
tests_unit_core_test_CPPFLAGS = $(AM_CPPFLAGS) $(GTEST_CFLAGS) $(GMOCK_CFLAGS)
tests_unit_core_test_LDADD = libcore/libautotune.la $(GMOCK_LIBS) $(GTEST_LIBS)

TESTS += tests/unit/core_test tests/unit/plugin_abi.sh tests/unit/configure_errors.sh
TESTS_ENVIRONMENT = top_builddir=$(top_builddir) top_srcdir=$(top_srcdir); export top_builddir top_srcdir;
EXTRA_DIST += tests/unit/plugin_abi.sh tests/unit/configure_errors.sh tests/integration tests/mpi/run.test tests/run-integration

# MPI test program: built with `make', run under srun and mpirun by tests/mpi/run.sh.
noinst_PROGRAMS += tests/mpi/allreduce_hosts
tests_mpi_allreduce_hosts_SOURCES = tests/mpi/allreduce_hosts.cc
tests_mpi_allreduce_hosts_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CPPFLAGS)
tests_mpi_allreduce_hosts_LDADD = $(MPI_LIBS)
