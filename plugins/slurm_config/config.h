/*
 * Stand-in for the config.h that Slurm's own build generates.  Slurm's internal headers
 * (src/common/..., src/slurmctld/slurmctld.h) include "config.h"; of all its macros they test
 * only these two.  Debian builds Slurm with --disable-debug, which defines NDEBUG.
 */
#define NDEBUG 1
#define USE_ALIAS 1
