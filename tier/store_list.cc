// What the store holds and how full it is: stat and exists of one key, list of the committed
// objects under a prefix (a scan without the store lock), check of their state (cheap, or by
// reading them), and usage per tier (committed and
// in-flight bytes, free space, objects, bandwidth, and a description of the medium, computed once).
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/error.hpp"
#include "autotune/tier.hpp"
#include "tier/fs.hpp"
#include "tier/media.hpp"
#include "tier/record.hpp"
#include "tier/store_impl.hpp"

namespace autotune {

using tierfs::Fd;
using tierfs::FileLock;
using tierfs::join;

ObjectInfo TierStore::stat(std::string_view key) {
  validate_tier_key(key);
  const std::string k(key);
  auto c = impl_->load_record(key_to_filename(k));
  if (!c) throw Error(Errc::not_found, "no object " + shown(k) + " in the store");
  return impl_->info_of(c->rec, c->accessed_ns);
}

bool TierStore::exists(std::string_view key) {
  validate_tier_key(key);
  struct stat st;
  return ::stat(join(impl_->objects_dir, key_to_filename(key)).c_str(), &st) == 0;
}

std::vector<ObjectInfo> TierStore::list(std::string_view prefix) {
  std::vector<ObjectInfo> out;
  Impl::Scan s = impl_->scan(false);
  for (size_t i = 0; i < s.records.size(); ++i)
    if (s.records[i].key.compare(0, prefix.size(), prefix) == 0)
      out.push_back(impl_->info_of(s.records[i], s.accessed[i]));
  std::sort(out.begin(), out.end(),
            [](const ObjectInfo &a, const ObjectInfo &b) { return a.key < b.key; });
  return out;
}

std::vector<ObjectHealth> TierStore::check(std::string_view prefix, bool read_data) {
  std::vector<ObjectHealth> out;
  Impl::Scan s = impl_->scan(false);
  for (size_t i = 0; i < s.records.size(); ++i) {
    const ObjectRecord &r = s.records[i];
    if (r.key.compare(0, prefix.size(), prefix) != 0) continue;
    ObjectHealth h;
    h.info = impl_->info_of(r, s.accessed[i]);
    const auto note = [&h](ObjectState state, const std::string &tier, const std::string &msg) {
      h.state = state;
      h.tier = tier;
      h.message = msg;
    };
    for (const auto &p : r.pieces) {
      const int t = impl_->tier_index(p.tier);
      if (t < 0) {
        note(ObjectState::damaged, p.tier,
             "object " + shown(r.key) + ": damaged: it has a piece on tier '" + p.tier +
                 "', which this store does not have");
        break;
      }
      if (auto f = impl_->piece_fault(impl_->tiers[static_cast<size_t>(t)], p, r.key)) {
        note(f->state(), f->tier(), f->what());
        break;
      }
    }
    if (read_data && h.state == ObjectState::ok) {
      try {
        get(r.key);
      } catch (const TierFault &f) {
        note(f.state(), f.tier(), f.what());
      } catch (const Error &e) {
        if (e.code() != Errc::not_found)
          note(ObjectState::damaged, "", e.what());
        else
          continue;  // removed meanwhile
      }
    }
    out.push_back(std::move(h));
  }
  std::sort(out.begin(), out.end(),
            [](const ObjectHealth &a, const ObjectHealth &b) { return a.info.key < b.info.key; });
  return out;
}

std::vector<TierUsage> TierStore::usage() {
  Impl &m = *impl_;
  Impl::Scan s;
  {
    Fd lfd = m.open_lock();
    FileLock lk(lfd.get(), FileLock::exclusive, m.lock_path);
    s = m.scan(true);
  }
  Impl::Scan committed;
  committed.records = s.records;
  const auto used = m.used_bytes(committed);
  Impl::Scan resv;
  resv.reserved = s.reserved;
  const auto flying = m.used_bytes(resv);
  const auto room = m.rooms(s);
  std::vector<TierUsage> out;
  for (size_t i = 0; i < m.tiers.size(); ++i) {
    Impl::Tier &t = m.tiers[i];
    TierUsage u;
    u.name = t.spec.name;
    u.kind = t.spec.kind;
    u.path = t.spec.path;
    u.capacity = t.spec.capacity;
    u.used = used[i];
    u.in_flight = flying[i];
    u.free = room[i].free;
    u.pool_missing = t.lost;
    for (const auto &r : s.records) {
      bool here = false;
      for (const auto &p : r.pieces) here = here || p.tier == t.spec.name;
      u.objects += here;
    }
    std::lock_guard<std::mutex> g(m.mu);
    u.bandwidth = t.bandwidth;
    u.measured = t.measured;
    if (t.media.empty()) {
      t.media = describe_filesystem(t.spec.path);
      if (t.lost) t.media += ", pool missing";
      if (t.map) {
        t.media += ", " + describe_granularity(t.map->granularity());
        const std::string numa = describe_numa(t.map->data(), t.map->size());
        if (!numa.empty()) t.media += ", " + numa;
      }
    }
    u.media = t.media;
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace autotune
