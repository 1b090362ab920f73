# tests/fuzz/: libFuzzer targets, one per parser of user or admin input (configure
# --enable-fuzzing with CXX=clang++; scripts/fuzz builds and runs them with the seed corpus of
# tests/fuzz/<target>/).  Included by Makefile.am only when FUZZING.  The libraries are compiled
# with -fsanitize=fuzzer-no-link,address,undefined (tests/sanitize/lib.sh's ASAN_FLAGS); only the targets
# link -fsanitize=fuzzer (FUZZ_LDFLAGS), which brings libFuzzer's main().
FUZZ_TARGETS = \
	tests/fuzz/fuzz_options \
	tests/fuzz/fuzz_conf \
	tests/fuzz/fuzz_result \
	tests/fuzz/fuzz_csv \
	tests/fuzz/fuzz_bb \
	tests/fuzz/fuzz_record \
	tests/fuzz/fuzz_manifest \
	tests/fuzz/fuzz_workflow
noinst_PROGRAMS += $(FUZZ_TARGETS)
FUZZ_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/fuzz

# --autotune* options and the space spec, as job_submit validates them (capi/submit.cc).
tests_fuzz_fuzz_options_SOURCES = tests/fuzz/fuzz_options.cc tests/fuzz/fuzz.hpp
tests_fuzz_fuzz_options_CPPFLAGS = $(FUZZ_CPPFLAGS) $(EIGEN_CFLAGS) $(SQLITE_CFLAGS) $(JSON_CFLAGS)
tests_fuzz_fuzz_options_LDFLAGS = $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_options_LDADD = $(AT_CAPI) $(AT_STORE) $(AT_CONF_LIBS)

# autotune.conf with tiers (Conf::load_text, TierSiteConf::load_text).
tests_fuzz_fuzz_conf_SOURCES = tests/fuzz/fuzz_conf.cc tests/fuzz/fuzz.hpp
tests_fuzz_fuzz_conf_CPPFLAGS = $(FUZZ_CPPFLAGS) $(EIGEN_CFLAGS)
tests_fuzz_fuzz_conf_LDFLAGS = $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_conf_LDADD = $(AT_CONF_LIBS)

# The result files ingest reads (parse_result, parse_search_summary) and the per-rank reports
# autotune-run merges (parse_rank_report).
tests_fuzz_fuzz_result_SOURCES = tests/fuzz/fuzz_result.cc tests/fuzz/fuzz.hpp
tests_fuzz_fuzz_result_CPPFLAGS = $(FUZZ_CPPFLAGS) $(JSON_CFLAGS)
tests_fuzz_fuzz_result_LDFLAGS = $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_result_LDADD = $(AT_FILES) $(AT_JOURNAL) $(AT_COMMON)

# The replay CSV (Table::parse_csv).
tests_fuzz_fuzz_csv_SOURCES = tests/fuzz/fuzz_csv.cc tests/fuzz/fuzz.hpp
tests_fuzz_fuzz_csv_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_fuzz_csv_LDFLAGS = $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_csv_LDADD = $(AT_ENGINE) $(AT_SEARCH) $(AT_COMMON)

# Workflow files (Workflow::parse, cut_stages, critical_path).
tests_fuzz_fuzz_workflow_SOURCES = tests/fuzz/fuzz_workflow.cc tests/fuzz/fuzz.hpp
tests_fuzz_fuzz_workflow_CPPFLAGS = $(FUZZ_CPPFLAGS) $(EIGEN_CFLAGS) $(JSON_CFLAGS)
tests_fuzz_fuzz_workflow_LDFLAGS = $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_workflow_LDADD = $(AT_SEARCH) $(AT_COMMON)

# autotune-bb's command lines from #BB_LUA directives (tools/args.cc, units, tier names and keys).
tests_fuzz_fuzz_bb_SOURCES = tests/fuzz/fuzz_bb.cc tests/fuzz/fuzz.hpp tools/args.cc tools/args.hpp
tests_fuzz_fuzz_bb_CPPFLAGS = $(FUZZ_CPPFLAGS) -I$(top_srcdir)/tools
tests_fuzz_fuzz_bb_LDFLAGS = $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_bb_LDADD = $(AT_TIER) $(AT_TIER_CONF) $(AT_COMMON) $(PTHREAD_LIBS)

# The tier store's on-media object records (tier/record.cc).
tests_fuzz_fuzz_record_SOURCES = tests/fuzz/fuzz_record.cc tests/fuzz/fuzz.hpp
tests_fuzz_fuzz_record_CPPFLAGS = $(FUZZ_CPPFLAGS) -I$(top_srcdir) $(XXHASH_CFLAGS)
tests_fuzz_fuzz_record_LDFLAGS = $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_record_LDADD = $(AT_TIER) $(AT_TIER_CONF) $(AT_COMMON) $(PTHREAD_LIBS)

# libssp's checkpoint manifest (libssp/manifest.cc) and the frames of the parts it lists.
tests_fuzz_fuzz_manifest_SOURCES = tests/fuzz/fuzz_manifest.cc tests/fuzz/fuzz.hpp
tests_fuzz_fuzz_manifest_CPPFLAGS = $(FUZZ_CPPFLAGS) -I$(top_srcdir)/libssp/include -I$(top_srcdir)/libssp \
	$(JSON_CFLAGS) $(ZLIB_CFLAGS)
tests_fuzz_fuzz_manifest_LDFLAGS = $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_manifest_LDADD = libssp/libssp_pure.la $(PTHREAD_LIBS)
