# store/: two libraries, so that the plugins (which only read and write the store) do not load
# the JSON readers and writers of the tools:
#   store/libautotune_store.la  the profile store (SQLite): classes, trials, recommendations,
#                               node speeds
#   store/libautotune_files.la  the JSON files that travel: the result an app or autotune-run
#                               leaves for ingest (result.hpp), and a class's export
#                               (export.hpp: `autotune export`, read back by steps mode)
# Both depend on common/ only.
noinst_LTLIBRARIES += store/libautotune_store.la store/libautotune_files.la
# store/libautotune_journal.la: the spool of job ends that prep/autotune writes inside slurmctld
# and `autotune ingest --spool` reads (journal.hpp); plain files, common/ only.
noinst_LTLIBRARIES += store/libautotune_journal.la
store_libautotune_journal_la_SOURCES = store/include/autotune/journal.hpp store/journal.cc
store_libautotune_files_la_SOURCES = \
	store/export.cc \
	store/include/autotune/export.hpp \
	store/include/autotune/rank_report.hpp \
	store/include/autotune/result.hpp \
	store/rank_report.cc \
	store/result.cc
store_libautotune_files_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS)
store_libautotune_store_la_SOURCES = \
	store/include/autotune/store.hpp \
	store/include/autotune/workflow_store.hpp \
	store/sqlite.cc \
	store/sqlite.hpp \
	store/store.cc \
	store/workflow_store.cc
store_libautotune_store_la_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS) $(JSON_CFLAGS)
store_libautotune_store_la_LIBADD = $(SQLITE_LIBS)

# Unit tests of the store (make check), and its behaviour under concurrent writers.
check_PROGRAMS += tests/unit/store_test
tests_unit_store_test_SOURCES = \
	tests/unit/export_test.cc \
	tests/unit/journal_test.cc \
	tests/unit/rank_report_test.cc \
	tests/unit/result_test.cc \
	tests/unit/store_test.cc
tests_unit_store_test_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS) $(JSON_CFLAGS) $(GTEST_CFLAGS)
tests_unit_store_test_LDADD = $(AT_FILES) $(AT_JOURNAL) $(AT_STORE) $(AT_COMMON) $(GTEST_LIBS)
TESTS += tests/unit/store_test tests/unit/store_concurrency.sh
EXTRA_DIST += tests/unit/fixtures tests/unit/store_concurrency.sh
check_PROGRAMS += tests/unit/store_stress
tests_unit_store_stress_SOURCES = tests/unit/store_stress.cc
tests_unit_store_stress_LDADD = $(AT_STORE) $(AT_COMMON)
# A fixture generator for the tests of the `autotune` command (built with `make').
noinst_PROGRAMS += tests/unit/store_fill
tests_unit_store_fill_SOURCES = tests/unit/store_fill.cc
tests_unit_store_fill_LDADD = $(AT_STORE) $(AT_COMMON)
