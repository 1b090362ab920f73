# AT_SLURM_PLUGINDIR
# ------------------
# Where `make install' puts the plugins: --with-slurm-plugindir=DIR, default $libdir/slurm-wlm
# (with --prefix=/usr --libdir=/usr/lib/x86_64-linux-gnu that is Debian's own PluginDir).  A site
# that installs elsewhere adds the directory to PluginDir in slurm.conf (a colon-separated list).
#
# Substitutes: slurmplugindir.
AC_DEFUN([AT_SLURM_PLUGINDIR], [
  AC_ARG_WITH([slurm-plugindir],
    [AS_HELP_STRING([--with-slurm-plugindir=DIR], [install the Slurm plugins in DIR (default: LIBDIR/slurm-wlm)])],
    [slurmplugindir=$withval],
    [slurmplugindir='${libdir}/slurm-wlm'])
  AC_SUBST([slurmplugindir])
])
