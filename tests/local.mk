# Tests of the build itself (make check) and the programs the MPI and integration tests run on
# the local cluster (scripts/test).  Unit tests of each library are listed in its local.mk.
TESTS += tests/unit/plugin_abi.sh tests/unit/link_deps.sh tests/unit/dense_symbols.sh   # configure_errors.sh: first (Makefile.am)
TESTS_ENVIRONMENT = top_builddir=$(top_builddir) top_srcdir=$(top_srcdir) LUA=$(LUA); export top_builddir top_srcdir LUA;
EXTRA_DIST += tests/unit/plugin_abi.sh tests/unit/configure_errors.sh tests/unit/link_deps.sh tests/unit/dense_symbols.sh tests/integration tests/mpi/run.test tests/run-integration tests/sanitize

# The scripts of scripts/ and bench/ answer --help and refuse an unknown option, starting nothing.
TESTS += tests/unit/scripts_help.sh
EXTRA_DIST += tests/unit/scripts_help.sh

# MPI test program: built with `make', run under srun and mpirun by tests/mpi/run.test.
noinst_PROGRAMS += tests/mpi/allreduce_hosts
tests_mpi_allreduce_hosts_SOURCES = tests/mpi/allreduce_hosts.cc
tests_mpi_allreduce_hosts_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CPPFLAGS)
tests_mpi_allreduce_hosts_LDADD = $(MPI_LIBS)

# libssp under real MPI ranks: run by tests/mpi/ssp.test.
noinst_PROGRAMS += tests/mpi/ssp_check
tests_mpi_ssp_check_SOURCES = tests/mpi/ssp_check.cc
tests_mpi_ssp_check_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/libssp/include $(MPI_CPPFLAGS)
tests_mpi_ssp_check_LDFLAGS = $(NO_WRAPPER_FLAGS)
tests_mpi_ssp_check_LDADD = libssp/libssp.la $(MPI_LIBS)
EXTRA_DIST += tests/mpi/ssp.test tests/mpi/ssp_examples.test tests/mpi/ssp_tier.test
