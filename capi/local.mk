# capi/: the C API the Slurm plugins call (autotune/autotune.h), one library per plugin so that
# each plugin loads only what it calls; every entry point is an exception firewall.
#   capi/libautotune_capi.la    log sink, class-name check, environment lookup (every plugin)
#   capi/libautotune_submit.la  at_submit*(): job_submit's decision (no model: propose_design)
#   capi/libautotune_select.la  at_select*(), at_node_is_slow(): node speeds for select/autotune
#   capi/libautotune_prep.la    at_prep*(): the ends of autotune jobs, for prep/autotune
noinst_LTLIBRARIES += capi/libautotune_capi.la capi/libautotune_submit.la capi/libautotune_select.la \
	capi/libautotune_prep.la
capi_libautotune_capi_la_SOURCES = \
	capi/include/autotune/autotune.h \
	capi/capi.cc \
	capi/capi_internal.hpp
capi_libautotune_submit_la_SOURCES = capi/submit.cc capi/capi_internal.hpp
capi_libautotune_submit_la_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(SQLITE_CFLAGS) $(JSON_CFLAGS)
capi_libautotune_select_la_SOURCES = capi/select_api.cc capi/capi_internal.hpp
capi_libautotune_prep_la_SOURCES = capi/prep_api.cc capi/capi_internal.hpp
capi_libautotune_select_la_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(SQLITE_CFLAGS)

# Unit tests of the C API, job_submit's decisions and prep's ingest (make check).
check_PROGRAMS += tests/unit/capi_test
tests_unit_capi_test_SOURCES = \
	tests/unit/capi_test.cc \
	tests/unit/submit_fixture.hpp \
	tests/unit/submit_test.cc \
	tests/unit/submit_unavailable_test.cc \
	tests/unit/prep_test.cc
tests_unit_capi_test_CPPFLAGS = $(AM_CPPFLAGS) $(EIGEN_CFLAGS) $(SQLITE_CFLAGS) $(JSON_CFLAGS) \
	$(GTEST_CFLAGS) $(GMOCK_CFLAGS)
tests_unit_capi_test_LDADD = $(AT_SUBMIT_API) $(AT_SELECT_API) $(AT_PREP_API) $(AT_CAPI) $(AT_ALL) $(GMOCK_LIBS) $(GTEST_LIBS)
TESTS += tests/unit/capi_test

# The select thread under concurrent readers (make check; scripts/test --tsan runs it under
# ThreadSanitizer).
check_PROGRAMS += tests/unit/select_thread_test
tests_unit_select_thread_test_SOURCES = tests/unit/select_thread_test.cc
tests_unit_select_thread_test_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS) $(GTEST_CFLAGS)
tests_unit_select_thread_test_LDADD = $(AT_SELECT_API) $(AT_CAPI) $(AT_STORE) $(AT_CONF_LIBS) $(GTEST_LIBS)
TESTS += tests/unit/select_thread_test
