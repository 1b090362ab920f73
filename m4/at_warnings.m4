# AT_COMPILER_WARNINGS
# --------------------
# -Wall -Wextra for every target; --enable-werror turns them into errors (CI uses it).
#
# Substitutes: AT_WARN_CXXFLAGS.
AC_DEFUN([AT_COMPILER_WARNINGS], [
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors])],
    [], [enable_werror=no])
  AT_WARN_CXXFLAGS="-Wall -Wextra"
  AS_IF([test "x$enable_werror" = xyes], [AT_WARN_CXXFLAGS="$AT_WARN_CXXFLAGS -Werror"])
  AC_SUBST([AT_WARN_CXXFLAGS])
])
