# examples: training programs on libssp (the demo and benchmark workloads), and the plain
# MPI_Allreduce versions of the classifiers they are compared with.  classifier.cc is the
# training loop of logreg and mlp (libssp and MPI_Allreduce); mlp_model.cc, the dense model, is
# compiled for this machine's CPU (EXAMPLES_ARCH_CXXFLAGS, see m4/at_examples_arch.m4).
noinst_LTLIBRARIES += examples/libexamples.la
examples_libexamples_la_SOURCES = examples/common.cc examples/common.hpp \
	examples/checkpoint.cc examples/checkpoint.hpp examples/classifier.cc examples/classifier.hpp
examples_libexamples_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/libssp/include $(ZLIB_CFLAGS) $(MPI_CPPFLAGS)
examples_libexamples_la_LIBADD = $(ZLIB_LIBS) $(MPI_LIBS)

EXAMPLE_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/libssp/include $(MPI_CPPFLAGS)

noinst_PROGRAMS += examples/logreg examples/logreg_allreduce examples/mf
examples_logreg_SOURCES = examples/logreg.cc
examples_logreg_CPPFLAGS = $(EXAMPLE_CPPFLAGS)
examples_logreg_LDFLAGS = $(NO_WRAPPER_FLAGS)
examples_logreg_LDADD = examples/libexamples.la libssp/libssp.la $(MPI_LIBS)

examples_logreg_allreduce_SOURCES = examples/logreg_allreduce.cc
examples_logreg_allreduce_CPPFLAGS = $(EXAMPLE_CPPFLAGS)
examples_logreg_allreduce_LDFLAGS = $(NO_WRAPPER_FLAGS)
examples_logreg_allreduce_LDADD = examples/libexamples.la libssp/libssp.la $(MPI_LIBS)

# The dense model, built once for the mlp programs and bench/gemm_rate.
noinst_LTLIBRARIES += examples/libmlp.la
examples_libmlp_la_SOURCES = examples/mlp_model.cc examples/mlp_model.hpp
examples_libmlp_la_CPPFLAGS = $(EXAMPLE_CPPFLAGS) $(EIGEN_SYSTEM_CPPFLAGS) -DEIGEN_NO_DEBUG
examples_libmlp_la_CXXFLAGS = $(AM_CXXFLAGS) $(EXAMPLES_ARCH_CXXFLAGS)
noinst_PROGRAMS += examples/mlp examples/mlp_allreduce
examples_mlp_SOURCES = examples/mlp.cc
examples_mlp_CPPFLAGS = $(EXAMPLE_CPPFLAGS)
examples_mlp_LDFLAGS = $(NO_WRAPPER_FLAGS)
examples_mlp_LDADD = examples/libmlp.la examples/libexamples.la libssp/libssp.la $(MPI_LIBS)
examples_mlp_allreduce_SOURCES = examples/mlp_allreduce.cc
examples_mlp_allreduce_CPPFLAGS = $(EXAMPLE_CPPFLAGS)
examples_mlp_allreduce_LDFLAGS = $(NO_WRAPPER_FLAGS)
examples_mlp_allreduce_LDADD = examples/libmlp.la examples/libexamples.la libssp/libssp.la $(MPI_LIBS)

examples_mf_SOURCES = examples/mf.cc
examples_mf_CPPFLAGS = $(EXAMPLE_CPPFLAGS)
examples_mf_LDFLAGS = $(NO_WRAPPER_FLAGS)
examples_mf_LDADD = examples/libexamples.la libssp/libssp.la $(MPI_LIBS)
EXTRA_DIST += examples/ssp_hello.cc

# PyTorch DistributedDataParallel on Fashion-MNIST (CPU, gloo), tuned by autotune-run
# (tests/integration/pytorch.test); needs Debian's python3-torch.
EXTRA_DIST += examples/pytorch/train_ddp.py examples/pytorch/README.md

# Workflow files of scout-dev.csv problems, for autotune replay --workflow (bench/workflow-replay).
EXTRA_DIST += examples/workflows
