# report/: the reporting contract's helpers for programs not linked with libssp
# (docs/reporting.md): libautotune_report (C API, report.h; no MPI, no libssp, no library of the
# project) with autotune-report.pc, the autotune-report command for shell scripts, and the
# pure-Python module slurm_autotune (installed where Debian's python3 finds it, and put on
# PYTHONPATH by autotune-run for any prefix).
lib_LTLIBRARIES += report/libautotune_report.la
report_libautotune_report_la_SOURCES = report/report.cc report/include/autotune/report.h
report_libautotune_report_la_CPPFLAGS = -I$(top_srcdir)/report/include
report_libautotune_report_la_LDFLAGS = -version-info 0:0:0 -export-symbols-regex '^at_report'
reportincludedir = $(includedir)/autotune
reportinclude_HEADERS = report/include/autotune/report.h
pkgconfig_DATA += report/autotune-report.pc
EXTRA_DIST += report/autotune-report.pc.in

bin_PROGRAMS += report/autotune-report
report_autotune_report_SOURCES = report/autotune_report.cc
report_autotune_report_CPPFLAGS = -I$(top_srcdir)/report/include
report_autotune_report_LDADD = report/libautotune_report.la

# The contract and its JSON schema, in $prefix/share/doc/slurm-autotune.
dist_doc_DATA = docs/reporting.md docs/schema/autotune-report.schema.json

# AT_PYTHONDIR: where Debian's python3 searches for the prefix (m4/at_python_dir.m4).
slurm_autotunedir = $(AT_PYTHONDIR)/slurm_autotune
slurm_autotune_DATA = python/slurm_autotune/__init__.py
EXTRA_DIST += python/slurm_autotune/__init__.py

check_PROGRAMS += tests/unit/report_test
tests_unit_report_test_SOURCES = tests/unit/report_test.cc
tests_unit_report_test_CPPFLAGS = -I$(top_srcdir)/report/include $(GTEST_CFLAGS)
tests_unit_report_test_LDFLAGS = $(NO_WRAPPER_FLAGS)
tests_unit_report_test_LDADD = report/libautotune_report.la $(GTEST_LIBS)
TESTS += tests/unit/report_test tests/unit/autotune_report.sh tests/unit/slurm_autotune_test.py
EXTRA_DIST += tests/unit/autotune_report.sh tests/unit/slurm_autotune_test.py
