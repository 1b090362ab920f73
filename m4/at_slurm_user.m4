# AT_SLURM_USER
# -------------
# The SlurmUser of the site: the owner of the profile store, the user `autotune' is installed
# setuid to, and (with root) the only user allowed to run `autotune ingest' and `autotune admin'.
# --with-slurm-user=NAME; default: SlurmUser from /etc/slurm/slurm.conf, else "slurm" when that
# user exists, else root.
#
# Defines AUTOTUNE_SLURM_USER; substitutes SLURM_USER.
AC_DEFUN([AT_SLURM_USER], [
  AC_ARG_WITH([slurm-user],
    [AS_HELP_STRING([--with-slurm-user=NAME], [the site's SlurmUser (default: from /etc/slurm/slurm.conf, else slurm, else root)])],
    [SLURM_USER=$withval], [SLURM_USER=])
  AS_IF([test -z "$SLURM_USER" && test -r /etc/slurm/slurm.conf],
        [SLURM_USER=`sed -n 's/^[[ 	]]*[[Ss]]lurm[[Uu]]ser[[ 	]]*=[[ 	]]*\([[^ 	#]]*\).*/\1/p' /etc/slurm/slurm.conf | tail -n 1`])
  AS_IF([test -z "$SLURM_USER"], [AS_IF([getent passwd slurm >/dev/null 2>&1], [SLURM_USER=slurm], [SLURM_USER=root])])
  AC_MSG_CHECKING([the SlurmUser])
  AC_MSG_RESULT([$SLURM_USER])
  AC_DEFINE_UNQUOTED([AUTOTUNE_SLURM_USER], ["$SLURM_USER"], [The site's SlurmUser])
  AC_SUBST([SLURM_USER])
])
