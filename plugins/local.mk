# The Slurm plugins: thin C++ shims over the C API (capi/), built against Slurm's internal
# headers of exactly the installed version (configure checks it).  Each exports only the plugin
# ABI, by a version script beside it (tests/unit/plugin_abi.sh checks with nm -D).  No -no-undefined: Slurm's own symbols are
# resolved from the loading daemon at dlopen time.
PLUGIN_CPPFLAGS = $(AM_CPPFLAGS) $(SLURM_CPPFLAGS) -I$(top_srcdir)/plugins
PLUGIN_LDFLAGS = -module -avoid-version -shared

slurmplugin_LTLIBRARIES += plugins/spank/spank_autotune.la
plugins_spank_spank_autotune_la_SOURCES = plugins/spank/spank_autotune.cc
plugins_spank_spank_autotune_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/plugins/spank/spank_autotune.map

slurmplugin_LTLIBRARIES += plugins/job_submit/job_submit_autotune.la
plugins_job_submit_job_submit_autotune_la_SOURCES = plugins/job_submit/job_submit_autotune.cc \
	plugins/slurm_log.hpp
plugins_job_submit_job_submit_autotune_la_CPPFLAGS = $(PLUGIN_CPPFLAGS)
plugins_job_submit_job_submit_autotune_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/plugins/job_submit/job_submit_autotune.map
plugins_job_submit_job_submit_autotune_la_LIBADD = $(AT_SUBMIT_API) $(AT_CAPI) $(AT_POLICY) $(AT_STORE) \
	$(AT_CONF_LIBS)

slurmplugin_LTLIBRARIES += plugins/select/select_autotune.la
plugins_select_select_autotune_la_SOURCES = plugins/select/select_autotune.cc plugins/slurm_log.hpp
plugins_select_select_autotune_la_CPPFLAGS = $(PLUGIN_CPPFLAGS)
plugins_select_select_autotune_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/plugins/select/select_autotune.map
plugins_select_select_autotune_la_LIBADD = $(AT_SELECT_API) $(AT_CAPI) $(AT_STORE) $(AT_CONF_LIBS) -ldl

slurmplugin_LTLIBRARIES += plugins/prep/prep_autotune.la
plugins_prep_prep_autotune_la_SOURCES = plugins/prep/prep_autotune.cc plugins/slurm_log.hpp
plugins_prep_prep_autotune_la_CPPFLAGS = $(PLUGIN_CPPFLAGS) -DAT_INGEST_PROGRAM='"$(bindir)/autotune"'
plugins_prep_prep_autotune_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/plugins/prep/prep_autotune.map
plugins_prep_prep_autotune_la_LIBADD = $(AT_PREP_API) $(AT_CAPI) $(AT_JOURNAL) $(AT_COMMON)

EXTRA_DIST += plugins/prep/prep_autotune.map
EXTRA_plugins_prep_prep_autotune_la_DEPENDENCIES = $(srcdir)/plugins/prep/prep_autotune.map
EXTRA_DIST += plugins/slurm_config/config.h plugins/spank/spank_autotune.map \
	plugins/job_submit/job_submit_autotune.map plugins/select/select_autotune.map
# Relink a plugin when its version script changes.
EXTRA_plugins_spank_spank_autotune_la_DEPENDENCIES = $(srcdir)/plugins/spank/spank_autotune.map
EXTRA_plugins_job_submit_job_submit_autotune_la_DEPENDENCIES = $(srcdir)/plugins/job_submit/job_submit_autotune.map
EXTRA_plugins_select_select_autotune_la_DEPENDENCIES = $(srcdir)/plugins/select/select_autotune.map
