# AT_CHECK_SLURM_SRC
# ------------------
# Slurm plugins need Slurm's internal headers (src/slurmctld/slurmctld.h, src/common/select.h),
# which only the source tree has.  --with-slurm-src=DIR names it; the default is the tree that
# scripts/setup fetched from Debian's source packages (.cache/slurm-src/current).  The tree must be
# exactly the installed version: a struct that differs by one field corrupts slurmctld's memory.
#
# Slurm's headers are included as system headers (-isystem): their warnings are not ours.
# Slurm's headers include "config.h".  The only macros they test are NDEBUG and USE_ALIAS, so the
# plugins use the two-line plugins/slurm_config/config.h instead of running Slurm's configure.
#
# Substitutes: SLURM_SRC, SLURM_CPPFLAGS.
AC_DEFUN([AT_CHECK_SLURM_SRC], [
  AC_REQUIRE([AT_CHECK_LIBSLURM])
  at_abs_srcdir=`cd "$srcdir" && pwd`
  AC_ARG_WITH([slurm-src],
    [AS_HELP_STRING([--with-slurm-src=DIR],
                    [Slurm source tree of the installed version (default: .cache/slurm-src/current, fetched by scripts/setup)])],
    [SLURM_SRC=$withval],
    [SLURM_SRC="$at_abs_srcdir/.cache/slurm-src/current"])
  AC_MSG_CHECKING([for the Slurm source tree])
  AS_IF([test ! -f "$SLURM_SRC/META" || test ! -f "$SLURM_SRC/src/slurmctld/slurmctld.h" || test ! -f "$SLURM_SRC/src/common/select.h"],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([no Slurm source tree at '$SLURM_SRC' (it needs META, src/slurmctld/slurmctld.h and src/common/select.h).
    The plugins are compiled against Slurm's internal headers of exactly the installed version ($SLURM_INSTALLED_VERSION).
    Run scripts/setup as root to fetch Debian's slurm-wlm source into .cache/slurm-src,
    or pass --with-slurm-src=DIR naming an unpacked slurm-$SLURM_INSTALLED_VERSION source tree.])])
  SLURM_SRC=`cd "$SLURM_SRC" && pwd`
  AC_MSG_RESULT([$SLURM_SRC])
  AC_MSG_CHECKING([the Slurm source tree's version])
  at_src_version=`sed -n 's/^[[ 	]]*Version:[[ 	]]*//p' "$SLURM_SRC/META" | head -n 1`
  AC_MSG_RESULT([$at_src_version])
  AS_IF([test "x$at_src_version" != "x$SLURM_INSTALLED_VERSION"],
        [AC_MSG_ERROR([the Slurm source at '$SLURM_SRC' is version '$at_src_version' but the installed Slurm is $SLURM_INSTALLED_VERSION.
    Plugins built against other headers would corrupt slurmctld.  Run scripts/setup to fetch the matching source,
    or pass --with-slurm-src=DIR naming a slurm-$SLURM_INSTALLED_VERSION tree.])])
  AC_PATH_PROG([SLURMCTLD], [slurmctld], [], [$PATH:/usr/sbin:/sbin])
  AS_IF([test -n "$SLURMCTLD"], [
    AC_MSG_CHECKING([the installed slurmctld's version])
    at_ctld_version=`$SLURMCTLD -V 2>/dev/null | sed -n 's/^slurm[[^ ]]* //p'`
    AC_MSG_RESULT([$at_ctld_version])
    AS_IF([test -n "$at_ctld_version" && test "x$at_ctld_version" != "x$SLURM_INSTALLED_VERSION"],
          [AC_MSG_ERROR([slurmctld is version $at_ctld_version but <slurm/slurm_version.h> says $SLURM_INSTALLED_VERSION: install matching slurmctld and libslurm-dev packages])])
  ])
  SLURM_CPPFLAGS="-I\$(top_srcdir)/plugins/slurm_config -isystem $SLURM_SRC"
  AC_SUBST([SLURM_SRC])
  AC_SUBST([SLURM_CPPFLAGS])
])
