#include "manifest.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "ssp/error.hpp"

namespace ssp {
namespace {

// The frame header (codec.hpp): magic, version, kind, padding, payload length, CRC-32.
constexpr std::size_t kCrcOffset = 4 + 1 + 1 + 2 + 8;
constexpr std::size_t kHeader = kCrcOffset + 4;

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

bool valid_id(const std::string &id) {
  if (id.size() != 13 || id[0] != 'c') return false;
  return std::all_of(id.begin() + 1, id.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::uint32_t frame_crc(std::string_view framed) {
  std::uint32_t crc = 0;
  std::memcpy(&crc, framed.data() + kCrcOffset, sizeof crc);
  return crc;
}

}  // namespace

PartSum part_sum(std::string name, std::string_view framed) {
  if (framed.size() < kHeader)
    throw Error(Errc::internal, "snapshot part '" + name + "': not framed");
  return PartSum{std::move(name), framed.size(), frame_crc(framed)};
}

void put_sums(Writer &w, const std::vector<PartSum> &sums) {
  w.put<std::uint32_t>(static_cast<std::uint32_t>(sums.size()));
  for (const auto &s : sums) {
    w.put_string(s.name);
    w.put<std::uint64_t>(s.bytes);
    w.put<std::uint32_t>(s.crc);
  }
}

std::vector<PartSum> get_sums(Reader &r) {
  const auto n = r.get<std::uint32_t>();
  std::vector<PartSum> out;
  out.reserve(std::min<std::size_t>(n, r.left()));
  for (std::uint32_t i = 0; i < n; ++i) {
    PartSum s;
    s.name = r.get_string();
    s.bytes = r.get<std::uint64_t>();
    s.crc = r.get<std::uint32_t>();
    out.push_back(std::move(s));
  }
  return out;
}

nlohmann::json sums_to_json(std::vector<PartSum> sums) {
  std::sort(sums.begin(), sums.end(),
            [](const PartSum &a, const PartSum &b) { return a.name < b.name; });
  nlohmann::json a = nlohmann::json::array();
  for (const auto &s : sums)
    a.push_back({{"name", s.name}, {"bytes", s.bytes}, {"crc32", hex32(s.crc)}});
  return a;
}

bool part_kind_of(const std::string &name, PartKind *kind) {
  const auto dot = name.find('.');
  if (dot == std::string::npos || !valid_id(name.substr(0, dot))) return false;
  const std::string rest = name.substr(dot + 1);
  auto ends = [&](const char *s) {
    const std::size_t n = std::strlen(s);
    return rest.size() > n && rest.compare(rest.size() - n, n, s) == 0;
  };
  if (rest == "scheduler") {
    *kind = PartKind::scheduler;
  } else if (rest.rfind("executor-", 0) == 0 && ends(".queue")) {
    *kind = PartKind::executor_queue;
  } else if (rest.rfind("executor-", 0) == 0 && ends(".state")) {
    *kind = PartKind::executor_state;
  } else if (rest.rfind("table-", 0) == 0 && rest.find(".shard-") != std::string::npos) {
    *kind = PartKind::shard;
  } else {
    return false;
  }
  return true;
}

SnapshotReader::SnapshotReader(const SnapshotStore &store, std::string id)
    : store_(store), id_(std::move(id)) {
  if (id_.empty()) {
    try {
      id_ = store_.get("latest");
    } catch (const Error &e) {
      if (e.code() != Errc::not_found) throw;
      throw Error(Errc::not_found, std::string("no snapshot to restore: ") + e.what());
    }
    while (!id_.empty() && (id_.back() == '\n' || id_.back() == ' ')) id_.pop_back();
    if (!valid_id(id_))
      throw Error(Errc::corrupt, "snapshot object 'latest': '" + id_.substr(0, 40) +
                                     "' is not a snapshot id (c and 12 digits)");
  } else if (!valid_id(id_)) {
    throw Error(Errc::invalid_argument,
                "snapshot id: '" + id_ + "' is not allowed; allowed: c and 12 digits");
  }
  const std::string mname = manifest_name();
  std::string text;
  try {
    text = store_.get(mname);
  } catch (const Error &e) {
    if (e.code() != Errc::not_found) throw;
    throw Error(Errc::not_found, "snapshot " + id_ + ": its manifest '" + mname +
                                     "' is missing (an incomplete snapshot): " + e.what());
  }
  try {
    man_ = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception &e) {
    throw Error(Errc::corrupt, "snapshot manifest '" + mname + "': " + e.what());
  }
  try {
    const std::string format = man_.is_object() ? man_.value("format", "") : "";
    if (format != kManifestFormat && format != "ssp-snapshot/1")
      throw Error(Errc::corrupt, "snapshot manifest '" + mname + "': unknown format '" + format +
                                     "'; this library reads ssp-snapshot/1 and /2");
    if (man_.value("id", "") != id_)
      throw Error(Errc::corrupt, "snapshot manifest '" + mname + "': describes snapshot '" +
                                     man_.value("id", "") + "'");
    if (format == kManifestFormat) {
      listed_ = true;
      for (const auto &p : man_.at("parts")) {
        PartSum s;
        s.name = p.at("name").get<std::string>();
        s.bytes = manifest_int<std::uint64_t>(p, "bytes", mname);
        const std::string c = p.at("crc32").get<std::string>();
        const bool hex = c.size() == 8 && std::all_of(c.begin(), c.end(), [](char x) {
                           return (x >= '0' && x <= '9') || (x >= 'a' && x <= 'f');
                         });
        if (!hex)
          throw Error(Errc::corrupt, "snapshot manifest '" + mname + "': part '" + s.name +
                                         "': crc32 '" + c + "' is not 8 hex digits");
        s.crc = static_cast<std::uint32_t>(std::strtoul(c.c_str(), nullptr, 16));
        if (s.name.rfind(id_ + ".", 0) != 0)
          throw Error(Errc::corrupt, "snapshot manifest '" + mname + "': lists part '" + s.name +
                                         "' of another snapshot");
        parts_.push_back(std::move(s));
      }
      std::sort(parts_.begin(), parts_.end(),
                [](const PartSum &a, const PartSum &b) { return a.name < b.name; });
    }
  } catch (const nlohmann::json::exception &e) {
    throw Error(Errc::corrupt, "snapshot manifest '" + mname + "': " + e.what());
  }
}

void SnapshotReader::check_present() const {
  if (!listed_) return;
  std::vector<std::string> names = store_.list();
  std::sort(names.begin(), names.end());
  for (const auto &p : parts_)
    if (!std::binary_search(names.begin(), names.end(), p.name))
      throw Error(Errc::not_found, "snapshot part '" + p.name + "' is missing (listed in '" +
                                       manifest_name() + "'); the snapshot cannot be restored");
}

std::string SnapshotReader::part(const std::string &name, PartKind kind) const {
  const PartSum *want = nullptr;
  if (listed_) {
    auto it = std::lower_bound(parts_.begin(), parts_.end(), name,
                               [](const PartSum &a, const std::string &n) { return a.name < n; });
    if (it == parts_.end() || it->name != name)
      throw Error(Errc::corrupt, "snapshot part '" + name + "' is not listed in '" +
                                     manifest_name() + "'; the snapshot is not trusted");
    want = &*it;
  }
  std::string bytes;
  try {
    bytes = store_.get(name);
  } catch (const Error &e) {
    if (e.code() == Errc::not_found)
      throw Error(Errc::not_found, "snapshot part '" + name + "' is missing (listed in '" +
                                       manifest_name() + "'): " + e.what());
    throw Error(e.code(), "snapshot part '" + name + "': " + e.what());
  }
  if (want) {
    if (bytes.size() != want->bytes)
      throw Error(Errc::corrupt, "snapshot part '" + name + "' is " + std::to_string(bytes.size()) +
                                     " bytes; its manifest says " + std::to_string(want->bytes) +
                                     " (torn or replaced)");
    const std::uint32_t crc = bytes.size() >= kHeader ? frame_crc(bytes) : ~want->crc;
    if (crc != want->crc)
      throw Error(Errc::corrupt, "snapshot part '" + name +
                                     "' does not match its manifest (CRC-32 " + hex32(crc) +
                                     ", the manifest says " + hex32(want->crc) +
                                     "): damaged, or left over from another snapshot");
  }
  return unframe_part(kind, bytes, name);
}

std::uint64_t SnapshotReader::check_all() const {
  check_present();
  std::vector<std::string> names;
  if (listed_) {
    for (const auto &p : parts_) names.push_back(p.name);
  } else {  // format 1: every object of the snapshot but its manifest
    for (auto &n : store_.list())
      if (n.rfind(id_ + ".", 0) == 0 && n != manifest_name()) names.push_back(std::move(n));
  }
  std::uint64_t total = 0;
  for (const auto &n : names) {
    PartKind k;
    if (!part_kind_of(n, &k))
      throw Error(Errc::corrupt, "snapshot manifest '" + manifest_name() + "': '" + n +
                                     "' is not the name of a snapshot part");
    total += part(n, k).size() + kHeader;  // as stored (framed)
  }
  return total;
}

SnapshotCheck verify_snapshot(const SnapshotStore &store, const std::string &id) {
  SnapshotReader r(store, id);
  SnapshotCheck c;
  c.id = r.id();
  try {
    const auto &m = r.manifest();
    const std::string mname = r.manifest_name();
    c.clock = manifest_int<std::int64_t>(m, "clock", mname);
    c.workers = manifest_int<int>(m, "workers", mname);
    c.servers = manifest_int<int>(m, "servers", mname);
    c.has_job = !m.at("job").is_null();
  } catch (const nlohmann::json::exception &e) {
    throw Error(Errc::corrupt, "snapshot manifest '" + r.manifest_name() + "': " + e.what());
  }
  c.listed = r.listed();
  c.bytes = r.check_all();
  if (c.listed) {
    c.parts = r.parts().size();
  } else {
    for (const auto &n : store.list())
      c.parts += n.rfind(c.id + ".", 0) == 0 && n != r.manifest_name();
  }
  return c;
}

std::vector<std::string> list_snapshots(const SnapshotStore &store) {
  std::vector<std::string> out;
  for (const auto &n : store.list()) {
    const auto dot = n.find('.');
    if (dot != std::string::npos && n.compare(dot, std::string::npos, ".manifest") == 0 &&
        valid_id(n.substr(0, dot)))
      out.push_back(n.substr(0, dot));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ssp
