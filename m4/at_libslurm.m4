# AT_CHECK_LIBSLURM
# -----------------
# The installed Slurm: public headers (libslurm-dev) and libslurm for the tools.  Reads
# SLURM_VERSION_NUMBER from <slurm/slurm_version.h>; the plugins must be built against exactly
# this version (Slurm refuses a plugin whose plugin_version differs, micro version included).
#
# Substitutes: SLURM_LIBS, SLURM_INSTALLED_VERSION (e.g. 22.05.8), SLURM_VERSION_HEX (0x160508).
AC_DEFUN([AT_CHECK_LIBSLURM], [
  AC_CHECK_HEADERS([slurm/slurm.h slurm/spank.h slurm/slurm_version.h], [],
                   [AC_MSG_ERROR([Slurm's public headers are missing: install libslurm-dev (scripts/setup)])])
  AC_CHECK_LIB([slurm], [slurm_load_job], [SLURM_LIBS=-lslurm],
               [AC_MSG_ERROR([libslurm is missing: install libslurm-dev (scripts/setup)])])
  AC_SUBST([SLURM_LIBS])
  AC_MSG_CHECKING([installed Slurm version])
  AC_COMPUTE_INT([at_slurm_num], [SLURM_VERSION_NUMBER], [[#include <slurm/slurm_version.h>]],
                 [AC_MSG_ERROR([cannot read SLURM_VERSION_NUMBER from <slurm/slurm_version.h>])])
  SLURM_INSTALLED_VERSION=`printf '%d.%02d.%d' $(( at_slurm_num >> 16 )) $(( (at_slurm_num >> 8) & 255 )) $(( at_slurm_num & 255 ))`
  SLURM_VERSION_HEX=`printf '0x%06x' $at_slurm_num`
  AC_MSG_RESULT([$SLURM_INSTALLED_VERSION])
  AC_SUBST([SLURM_INSTALLED_VERSION])
  AC_SUBST([SLURM_VERSION_HEX])
])
