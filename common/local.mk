# common/: what every part of slurm-autotune shares and nothing else needs: named errors, the log
# sink, units and number parsing, class names, the seeded random stream, and the autotune.conf
# reader (lines of Key=Value, the core section).  Depends on nothing of the project.
noinst_LTLIBRARIES += common/libautotune_common.la
common_libautotune_common_la_SOURCES = \
	common/include/autotune/error.hpp \
	common/include/autotune/log.hpp \
	common/include/autotune/names.hpp \
	common/include/autotune/raw_conf.hpp \
	common/include/autotune/rng.hpp \
	common/include/autotune/units.hpp \
	common/error.cc \
	common/log.cc \
	common/names.cc \
	common/raw_conf.cc \
	common/units.cc
