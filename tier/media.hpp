// What backs a tier's directory (internal): the file system, the block device and whether it is
// rotational, and for a pmem mapping its store granularity and the NUMA node(s) holding it
// (hwloc_get_area_memlocation).  Used for TierUsage::media; never fails (unknown parts are
// reported as unknown).
#pragma once

#include <cstddef>
#include <string>

#include "autotune/tier.hpp"

namespace autotune {

std::string describe_filesystem(const std::string &path);
// The NUMA nodes of the pages of [addr, addr+len), e.g. "NUMA node 0"; "" when unknown.
std::string describe_numa(const void *addr, std::size_t len);
std::string describe_granularity(PmemGranularity g);

}  // namespace autotune
