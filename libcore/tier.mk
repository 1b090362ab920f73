# libcore/tier.mk: the tier store (objects split across persistent memory and disk) and the
# burst buffers of Slurm jobs built on it, as a convenience library of its own so that libpmem2,
# libxxhash and hwloc are linked only into what uses the store (autotune-bb, its tests and
# benchmark, libssp), never into the Slurm plugins.
#   libcore/libautotune_tier.la   autotune/tier.hpp, autotune/job_buffer.hpp
# The parsing of the Tier keys of autotune.conf (no libpmem2) is part of libautotune.la.
libcore_libautotune_la_SOURCES += \
	libcore/include/autotune/tier_conf.hpp \
	libcore/tier_conf.cc
