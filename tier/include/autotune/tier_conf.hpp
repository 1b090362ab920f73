// Storage tiers in autotune.conf: the section that describes the node's persistent memory and
// disk tiers, and how the tier store places objects on them (every key is documented with its
// default in etc/autotune.conf).
//
//   Tier=NAME Kind=pmem|disk Path=DIR Capacity=SIZE [Bandwidth=SIZE/s|measured]   (repeated)
//   TierPlacement=auto|bandwidth-proportional|fill-fastest
//   TierDemotion=yes|no
//
// This is parsing only (no libpmem2): it lives in libautotune so that every reader of
// autotune.conf, the Slurm plugins included, accepts and validates these keys; the store itself is
// in libautotune_tier (autotune/tier.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/raw_conf.hpp"

namespace autotune {

class RawConf;

// What backs a tier.  pmem: a file mapped with libpmem2 (persistent memory on DAX, or any
// file with page granularity); disk: files written with write(2) and made durable with fsync(2).
enum class TierKind { pmem, disk };

// How put() splits an object across tiers.
//  fill_fastest: the fastest tier takes as much as it has free, the rest spills to the next
//    tier, and the pieces are written one tier after the other (the top-down placement of
//    Hermes' data placement engine).
//  bandwidth_proportional: each tier takes a share proportional to its bandwidth, capped by its
//    free space (water-filling), so that all tiers finish together; pieces are written in
//    parallel, one thread per tier, the memory-mapped (pmem) piece being copied while the disk
//    pieces wait for their device.
//  automatic (the default): an object that fits in the fastest tier's free space goes there
//    whole, as with fill_fastest; a bigger one is split as with bandwidth_proportional.  A small
//    piece on a slower tier costs more than the estimate bandwidth_proportional splits by
//    (file creation, journal commit, directory fsync), and beyond the fastest tier's free space
//    the parallel schedule wins.
enum class PlacementPolicy { fill_fastest, bandwidth_proportional, automatic };

const char *tier_kind_name(TierKind kind) noexcept;  // "pmem", "disk"
const char *placement_name(PlacementPolicy p) noexcept;  // "fill-fastest", "bandwidth-proportional", "auto"

// "auto" | "fill-fastest" | "bandwidth-proportional" (case-insensitive).  Throws Error(invalid_argument)
// naming `field`, the value and the allowed values.
PlacementPolicy parse_placement(std::string_view field, std::string_view value);

// "2G/s", "500M/s", "1048576/s" (bytes per second, units as parse_size) or "measured" (returns
// 0).  Throws Error(invalid_argument) otherwise.
std::uint64_t parse_bandwidth(std::string_view field, std::string_view value);

// Longest tier name; names are 1..32 characters from [A-Za-z0-9_-].
inline constexpr std::size_t kTierNameMax = 32;
void validate_tier_name(std::string_view name, std::string_view field);

// Smallest tier capacity accepted; a pmem tier's capacity is a multiple of kTierPage.
inline constexpr std::uint64_t kTierMinCapacity = 1ull << 20;
inline constexpr std::uint64_t kTierPage = 4096;

struct TierSpec {
  std::string name;
  TierKind kind = TierKind::disk;
  std::string path;             // absolute directory
  std::uint64_t capacity = 0;   // bytes
  std::uint64_t bandwidth = 0;  // bytes per second; 0 = measured by the store
};

struct TierConf {
  std::vector<TierSpec> tiers;  // in the order of the file; at most one pmem tier
  PlacementPolicy placement = PlacementPolicy::automatic;
  bool demotion = true;  // demote cold objects when the fastest tier is full
};

// Takes Tier, TierPlacement and TierDemotion from `raw`.  Throws Error(invalid_argument) with
// "FILE:LINE: Tier=NAME Field: ..." for the first bad line: a missing or unknown field, a
// relative path, a capacity below 1M (or not a multiple of 4K on a pmem tier), a bad bandwidth,
// a duplicate name or path, a second pmem tier.
void parse_tier_section(RawConf &raw, TierConf &out);

// The autotune.conf line that describes `t` (parse_tier_section reads it back unchanged).
std::string format_tier_line(const TierSpec &t);

// The core and tier sections of an autotune.conf, read without the rest: what a job's tier
// store needs (libssp, autotune-bb), without the engine's and tuner's sections.  Keys of other
// sections are left alone here; Conf::load (conf/) checks the whole file.
struct TierSiteConf {
  std::string path;  // the file it was read from; empty for built-in defaults
  CoreConf core;
  TierConf tier;
  // Throws Error(not_found|io|invalid_argument) like Conf::load.
  static TierSiteConf load(const std::string &path);
  static TierSiteConf load_text(std::string_view text, const std::string &file = "<text>");
};

}  // namespace autotune
