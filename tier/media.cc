#include "tier/media.hpp"

#include <hwloc.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace autotune {
namespace {

std::string fs_name(unsigned long type) {
  switch (type) {
    case 0x01021994:
      return "tmpfs";
    case 0xEF53:
      return "ext4";
    case 0x58465342:
      return "xfs";
    case 0x9123683E:
      return "btrfs";
    case 0x6969:
      return "nfs";
    case 0x794c7630:
      return "overlayfs";
    case 0x47504653:
      return "gpfs";
    case 0x0BD00BD0:
      return "lustre";
    case 0x65735546:
      return "fuse";
    default:
      return "file system 0x" + [&] {
        char b[32];
        std::snprintf(b, sizeof b, "%lx", type);
        return std::string(b);
      }();
  }
}

std::string read_line(const std::string &path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

}  // namespace

std::string describe_filesystem(const std::string &path) {
  struct statfs sf;
  if (::statfs(path.c_str(), &sf) != 0) return "unknown medium";
  std::string out = fs_name(static_cast<unsigned long>(sf.f_type));
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return out;
  const std::string dev =
      "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  std::string name;  // from uevent's DEVNAME=vda1 line
  {
    std::ifstream in(dev + "/uevent");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("DEVNAME=", 0) == 0) name = line.substr(8);
  }
  if (name.empty()) return out;  // no block device (tmpfs, network)
  std::string rot = read_line(dev + "/queue/rotational");
  if (rot.empty()) rot = read_line(dev + "/../queue/rotational");  // a partition
  out += " on " + name;
  if (rot == "1")
    out += " (rotational)";
  else if (rot == "0")
    out += " (non-rotational)";
  return out;
}

std::string describe_granularity(PmemGranularity g) {
  switch (g) {
    case PmemGranularity::byte:
      return "byte granularity (DAX, eADR)";
    case PmemGranularity::cache_line:
      return "cache-line granularity (DAX)";
    case PmemGranularity::page:
      return "page granularity (msync)";
  }
  return "";
}

std::string describe_numa(const void *addr, std::size_t len) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return "";
  std::string out;
  if (hwloc_topology_load(topo) == 0) {
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set && hwloc_get_area_memlocation(topo, addr, len, set, HWLOC_MEMBIND_BYNODESET) == 0 &&
        !hwloc_bitmap_iszero(set)) {
      char *list = nullptr;
      if (hwloc_bitmap_list_asprintf(&list, set) >= 0 && list) {
        out = std::string(hwloc_bitmap_weight(set) > 1 ? "NUMA nodes " : "NUMA node ") + list;
        std::free(list);
      }
    }
    if (set) hwloc_bitmap_free(set);
  }
  hwloc_topology_destroy(topo);
  return out;
}

}  // namespace autotune
