#include "autotune/tier_conf.hpp"

#include <cctype>
#include <string>

#include "autotune/raw_conf.hpp"
#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char &c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool iequal(std::string_view a, std::string_view b) { return lower(a) == lower(b); }

// A directory path as a tier needs it: absolute, no "." or ".." component, no control character
// or double quote (the line must be writable back into autotune.conf).
void validate_tier_path(const std::string &field, const std::string &path) {
  if (path.empty() || path[0] != '/')
    throw_invalid(field + ": '" + path + "' is not an absolute path");
  for (char c : path)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '"')
      throw_invalid(field + ": '" + path + "' contains a control character or a double quote");
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    const std::string_view comp(path.data() + i, j - i);
    if (comp == "." || comp == "..")
      throw_invalid(field + ": '" + path + "' has a '" + std::string(comp) +
                    "' component; write the path without it");
    i = j + 1;
  }
}

TierSpec parse_tier_line(const ConfLine &l) {
  TierSpec t;
  t.name = l.tokens[0].value;
  const std::string where = l.where() + ": Tier";
  validate_tier_name(t.name, where);
  const std::string prefix = l.where() + ": Tier=" + t.name + " ";
  bool have_kind = false, have_path = false, have_cap = false, have_bw = false;
  for (size_t i = 1; i < l.tokens.size(); ++i) {
    const ConfToken &tok = l.tokens[i];
    const std::string k = lower(tok.key);
    auto once = [&](bool &seen) {
      if (seen) throw_invalid(prefix + tok.key + " is given twice on the line");
      seen = true;
    };
    if (k == "kind") {
      once(have_kind);
      const std::string v = lower(tok.value);
      if (v == "pmem")
        t.kind = TierKind::pmem;
      else if (v == "disk")
        t.kind = TierKind::disk;
      else
        throw_invalid(prefix + "Kind: '" + tok.value + "' is not a tier kind; allowed: pmem, disk");
    } else if (k == "path") {
      once(have_path);
      validate_tier_path(prefix + "Path", tok.value);
      t.path = tok.value;
      while (t.path.size() > 1 && t.path.back() == '/') t.path.pop_back();
    } else if (k == "capacity") {
      once(have_cap);
      t.capacity = parse_size(prefix + "Capacity", tok.value, 'B');
    } else if (k == "bandwidth") {
      once(have_bw);
      t.bandwidth = parse_bandwidth(prefix + "Bandwidth", tok.value);
    } else {
      throw_invalid(prefix + "has an unknown field '" + tok.key +
                    "'; allowed: Kind, Path, Capacity, Bandwidth");
    }
  }
  if (!have_kind) throw_invalid(prefix + "has no Kind= (allowed: pmem, disk)");
  if (!have_path) throw_invalid(prefix + "has no Path= (an absolute directory)");
  if (!have_cap) throw_invalid(prefix + "has no Capacity= (e.g. Capacity=64G)");
  if (t.capacity < kTierMinCapacity)
    throw_invalid(prefix + "Capacity: '" + *l.get("Capacity") + "' is smaller than the minimum 1M");
  if (t.kind == TierKind::pmem && t.capacity % kTierPage != 0)
    throw_invalid(prefix + "Capacity: '" + *l.get("Capacity") +
                  "' is not a multiple of 4K, the page size a pmem tier is mapped in");
  return t;
}

}  // namespace

const char *tier_kind_name(TierKind kind) noexcept {
  return kind == TierKind::pmem ? "pmem" : "disk";
}

const char *placement_name(PlacementPolicy p) noexcept {
  switch (p) {
    case PlacementPolicy::fill_fastest: return "fill-fastest";
    case PlacementPolicy::bandwidth_proportional: return "bandwidth-proportional";
    case PlacementPolicy::automatic: break;
  }
  return "auto";
}

PlacementPolicy parse_placement(std::string_view field, std::string_view value) {
  const std::string v = lower(value);
  if (v == "auto") return PlacementPolicy::automatic;
  if (v == "fill-fastest") return PlacementPolicy::fill_fastest;
  if (v == "bandwidth-proportional") return PlacementPolicy::bandwidth_proportional;
  throw_invalid(std::string(field) + ": '" + std::string(value) +
                "' is not a placement policy; allowed: auto, bandwidth-proportional, fill-fastest");
}

std::uint64_t parse_bandwidth(std::string_view field, std::string_view value) {
  if (iequal(value, "measured")) return 0;
  const std::string allowed = "allowed: 'measured' or a size per second such as 2G/s or 500M/s";
  if (value.size() < 3 || value.substr(value.size() - 2) != "/s")
    throw_invalid(std::string(field) + ": '" + std::string(value) + "' is not a bandwidth; " +
                  allowed);
  std::uint64_t bw;
  try {
    bw = parse_size(field, value.substr(0, value.size() - 2), 'B');
  } catch (const Error &) {
    throw_invalid(std::string(field) + ": '" + std::string(value) + "' is not a bandwidth; " +
                  allowed);
  }
  if (bw == 0)
    throw_invalid(std::string(field) + ": '" + std::string(value) + "' is zero; " + allowed);
  return bw;
}

void validate_tier_name(std::string_view name, std::string_view field) {
  const std::string allowed = "allowed: 1-32 characters from A-Z a-z 0-9 _ -";
  if (name.empty()) throw_invalid(std::string(field) + ": the tier name is empty; " + allowed);
  if (name.size() > kTierNameMax)
    throw_invalid(std::string(field) + ": the tier name '" + std::string(name) + "' is " +
                  std::to_string(name.size()) + " characters long; " + allowed);
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      throw_invalid(std::string(field) + ": the tier name '" + std::string(name) +
                    "' contains a character that is not allowed; " + allowed);
}

void parse_tier_section(RawConf &raw, TierConf &out) {
  TierConf c;
  std::vector<std::string> where;
  for (const ConfLine &l : raw.take_all("Tier")) {
    TierSpec t = parse_tier_line(l);
    for (size_t i = 0; i < c.tiers.size(); ++i) {
      if (iequal(c.tiers[i].name, t.name))
        throw_invalid(l.where() + ": Tier=" + t.name + " is defined twice (first at " + where[i] +
                      ")");
      if (c.tiers[i].path == t.path)
        throw_invalid(l.where() + ": Tier=" + t.name + " Path: '" + t.path +
                      "' is already the path of tier '" + c.tiers[i].name + "' (" + where[i] + ")");
      if (c.tiers[i].kind == TierKind::pmem && t.kind == TierKind::pmem)
        throw_invalid(l.where() + ": Tier=" + t.name + ": a second pmem tier (tier '" +
                      c.tiers[i].name + "' at " + where[i] + " is one); at most one is allowed");
    }
    where.push_back(l.where());
    c.tiers.push_back(std::move(t));
  }
  if (auto l = raw.take_line("TierPlacement"))
    c.placement = parse_placement(l->where() + ": TierPlacement", l->tokens[0].value);
  if (auto l = raw.take_line("TierDemotion"))
    c.demotion = parse_bool(l->where() + ": TierDemotion", l->tokens[0].value);
  out = std::move(c);
}

std::string format_tier_line(const TierSpec &t) {
  std::string path = t.path;
  if (path.find_first_of(" \t#=") != std::string::npos) path = "\"" + path + "\"";
  return "Tier=" + t.name + " Kind=" + tier_kind_name(t.kind) + " Path=" + path +
         " Capacity=" + format_size(t.capacity) +
         " Bandwidth=" + (t.bandwidth ? format_size(t.bandwidth) + "/s" : std::string("measured"));
}

namespace {
TierSiteConf tier_site_conf(RawConf raw, std::string path) {
  TierSiteConf c;
  c.path = std::move(path);
  parse_core_section(raw, c.core);
  parse_tier_section(raw, c.tier);
  return c;
}
}  // namespace

TierSiteConf TierSiteConf::load(const std::string &path) { return tier_site_conf(RawConf::parse_file(path), path); }

TierSiteConf TierSiteConf::load_text(std::string_view text, const std::string &file) {
  return tier_site_conf(RawConf::parse_text(text, file), file);
}

}  // namespace autotune
