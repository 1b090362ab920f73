# libcore: libautotune, the C++ core (no Slurm headers).  Convenience libraries, folded into
# the plugins, tools and libssp that use them, so each target links only what it needs:
#   libautotune.la       engine, store, options, C API     (SQLite, Eigen)
noinst_LTLIBRARIES += libcore/libautotune.la
libcore_libautotune_la_SOURCES = \
	libcore/include/autotune/autotune.h \
	libcore/include/autotune/error.hpp \
	libcore/include/autotune/log.hpp \
	libcore/include/autotune/names.hpp \
	libcore/capi.cc \
	libcore/error.cc \
	libcore/log.cc \
	libcore/names.cc
libcore_libautotune_la_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(SQLITE_CFLAGS)
libcore_libautotune_la_LIBADD = $(SQLITE_LIBS)
