# AT_PROG_MPICXX
# --------------
# Find the MPI C++ compiler wrapper (mpicxx, or $MPICXX) and ask it for the flags it adds, so that
# MPI is compiled and linked only into the targets that use it (libssp, the examples, the MPI
# tests) while everything else builds with the plain $CXX.
#
# Substitutes: MPICXX, MPI_CPPFLAGS, MPI_LIBS.  Fails when no working MPI is found.
AC_DEFUN([AT_PROG_MPICXX], [
  AC_ARG_VAR([MPICXX], [MPI C++ compiler wrapper (default: mpicxx)])
  AC_PATH_PROGS([MPICXX], [mpicxx mpic++ mpiCC], [no])
  AS_IF([test "x$MPICXX" = xno],
        [AC_MSG_ERROR([no MPI C++ compiler wrapper (mpicxx) found: install Open MPI with scripts/setup, or set MPICXX=])])
  AC_MSG_CHECKING([MPI compile flags])
  MPI_CPPFLAGS=`$MPICXX --showme:compile 2>/dev/null` || MPI_CPPFLAGS=`$MPICXX -compile_info 2>/dev/null | cut -d' ' -f2- | tr ' ' '\n' | grep '^-I' | tr '\n' ' '`
  dnl The deprecated MPI C++ bindings are not used; their headers do not build with -Wextra.
  dnl MPI's headers are system headers (-isystem): their warnings are not ours.
  MPI_CPPFLAGS="-DOMPI_SKIP_MPICXX=1 -DMPICH_SKIP_MPICXX=1 `echo " $MPI_CPPFLAGS" | sed 's/ -I/ -isystem /g'`"
  AC_MSG_RESULT([$MPI_CPPFLAGS])
  AC_MSG_CHECKING([MPI link flags])
  MPI_LIBS=`$MPICXX --showme:link 2>/dev/null` || MPI_LIBS=`$MPICXX -link_info 2>/dev/null | cut -d' ' -f2- | tr ' ' '\n' | grep '^-[[Ll]]' | tr '\n' ' '`
  MPI_LIBS=`echo " $MPI_LIBS" | sed 's/ -lmpi_cxx//g'`
  AC_MSG_RESULT([$MPI_LIBS])
  at_save_CPPFLAGS=$CPPFLAGS; at_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $MPI_CPPFLAGS"; LIBS="$MPI_LIBS $LIBS"
  AC_MSG_CHECKING([whether MPI programs link with those flags])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]],
                                  [[int p = 0; MPI_Init_thread(0, 0, MPI_THREAD_MULTIPLE, &p); return MPI_Finalize();]])],
                 [AC_MSG_RESULT([yes])],
                 [AC_MSG_RESULT([no]); AC_MSG_ERROR([$MPICXX gave flags that do not link an MPI program; install libopenmpi-dev (scripts/setup)])])
  CPPFLAGS=$at_save_CPPFLAGS; LIBS=$at_save_LIBS
  AC_SUBST([MPI_CPPFLAGS])
  AC_SUBST([MPI_LIBS])
])
