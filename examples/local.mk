# examples: training programs on libssp (the demo and benchmark workloads), and the plain
# MPI_Allreduce version of the logistic regression they are compared with.
noinst_LTLIBRARIES += examples/libexamples.la
examples_libexamples_la_SOURCES = examples/common.cc examples/common.hpp \
	examples/checkpoint.cc examples/checkpoint.hpp
examples_libexamples_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/libssp/include $(ZLIB_CFLAGS) $(MPI_CPPFLAGS)
examples_libexamples_la_LIBADD = $(ZLIB_LIBS) $(MPI_LIBS)

EXAMPLE_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/libssp/include $(MPI_CPPFLAGS)

noinst_PROGRAMS += examples/logreg examples/logreg_allreduce examples/mf
examples_logreg_SOURCES = examples/logreg.cc
examples_logreg_CPPFLAGS = $(EXAMPLE_CPPFLAGS)
examples_logreg_LDADD = examples/libexamples.la libssp/libssp.la $(MPI_LIBS)

examples_logreg_allreduce_SOURCES = examples/logreg_allreduce.cc
examples_logreg_allreduce_CPPFLAGS = $(EXAMPLE_CPPFLAGS)
examples_logreg_allreduce_LDADD = examples/libexamples.la libssp/libssp.la $(MPI_LIBS)

examples_mf_SOURCES = examples/mf.cc
examples_mf_CPPFLAGS = $(EXAMPLE_CPPFLAGS)
examples_mf_LDADD = examples/libexamples.la libssp/libssp.la $(MPI_LIBS)
EXTRA_DIST += examples/ssp_hello.cc

# PyTorch DistributedDataParallel on Fashion-MNIST (CPU, gloo), tuned by autotune-run
# (tests/integration/pytorch.test); needs Debian's python3-torch.
EXTRA_DIST += examples/pytorch/train_ddp.py examples/pytorch/README.md

# Workflow files of scout-dev.csv problems, for autotune replay --workflow (bench/workflow-replay).
EXTRA_DIST += examples/workflows
