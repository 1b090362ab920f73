# AT_PYTHON_DIR
# -------------
# Where `make install' puts the Python module slurm_autotune (report/local.mk): a directory that
# Debian's python3 searches for the prefix -- $prefix/lib/python3/dist-packages for /usr,
# $prefix/lib/python3.X/dist-packages for any other prefix (/usr/local: Debian's site.py searches
# /usr/local/lib/python3.X/dist-packages), X being the version of /usr/bin/python3 (else of the
# python3 on PATH).  autotune-run also puts it on the PYTHONPATH of the programs it runs, so
# jobs find it for any prefix.  --with-python-dir=DIR to choose.
#
# Substitutes AT_PYTHONDIR (it may name ${prefix}).
AC_DEFUN([AT_PYTHON_DIR], [
  AC_ARG_WITH([python-dir],
    [AS_HELP_STRING([--with-python-dir=DIR], [where the Python module slurm_autotune goes (default: where Debian's python3 searches for the prefix)])],
    [at_python_dir=$withval], [at_python_dir=])
  AS_IF([test -z "$at_python_dir"], [
    at_python3=/usr/bin/python3
    AS_IF([test -x "$at_python3"], [], [at_python3=python3])
    at_python_version=`$at_python3 -c 'import sys; print("%d.%d" % sys.version_info[[:2]])' 2>/dev/null`
    AS_IF([test "x$prefix" = x/usr || test -z "$at_python_version"],
          [at_python_dir='${prefix}/lib/python3/dist-packages'],
          [at_python_dir="\${prefix}/lib/python$at_python_version/dist-packages"])
  ])
  AC_MSG_CHECKING([where the Python module goes])
  AC_MSG_RESULT([$at_python_dir])
  AC_SUBST([AT_PYTHONDIR], [$at_python_dir])
])
