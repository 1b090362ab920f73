#include "ssp/tier_store.hpp"

#include <algorithm>
#include <set>

#include "autotune/job_buffer.hpp"
#include "autotune/log.hpp"
#include "ssp/error.hpp"

namespace ssp {
namespace {

constexpr std::size_t kPrefixMax = 150;

bool is_snapshot_id(const std::string &s) {
  return s.size() == 13 && s[0] == 'c' &&
         std::all_of(s.begin() + 1, s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The snapshot id an object belongs to ("c000000000042.table-w.shard-3" -> "c000000000042"),
// or "" for objects of no snapshot (such as `latest`).
std::string id_of(const std::string &name) {
  const auto dot = name.find('.');
  if (dot == std::string::npos) return "";
  std::string id = name.substr(0, dot);
  return is_snapshot_id(id) ? id : "";
}

TierSnapshotOptions checked(TierSnapshotOptions o) {
  while (o.prefix.size() > 1 && o.prefix.back() == '/') o.prefix.pop_back();
  if (o.prefix.size() > kPrefixMax)
    throw Error(Errc::invalid_argument, "tier snapshot prefix: '" + o.prefix +
                                            "' is too long; allowed: at most " +
                                            std::to_string(kPrefixMax) + " characters");
  autotune::validate_tier_key(o.prefix, "tier snapshot prefix");
  if (o.keep < 0)
    throw Error(Errc::invalid_argument, "tier snapshot keep: '" + std::to_string(o.keep) +
                                            "' is not allowed; allowed: 0 (keep all) or more");
  return o;
}

}  // namespace

TierSnapshotStore::TierSnapshotStore(autotune::TierStore &store, TierSnapshotOptions options)
    : store_(&store), opt_(checked(std::move(options))) {}

TierSnapshotStore::TierSnapshotStore(autotune::TierStore &&store, TierSnapshotOptions options)
    : owned_(std::make_unique<autotune::TierStore>(std::move(store))),
      store_(owned_.get()),
      opt_(checked(std::move(options))) {}

std::unique_ptr<TierSnapshotStore> TierSnapshotStore::open_job_buffer(
    TierSnapshotOptions options, std::uint32_t job, const std::string &conf_path) {
  options = checked(std::move(options));
  return std::make_unique<TierSnapshotStore>(autotune::open_job_buffer(job, conf_path),
                                             std::move(options));
}

std::string TierSnapshotStore::key(const std::string &name) const {
  check_name(name);
  return opt_.prefix + "/" + name;
}

void TierSnapshotStore::put(const std::string &name, std::string_view bytes) {
  const std::string k = key(name);
  store_->put(k, bytes.data(), bytes.size());
  if (name != "latest" || opt_.keep == 0) return;
  try {
    prune(opt_.keep);
  } catch (const std::exception &e) {
    autotune::log(autotune::LogLevel::error,
                  std::string("ssp: tier store: removing old snapshots failed: ") + e.what());
  }
}

std::string TierSnapshotStore::get(const std::string &name) const {
  const std::string k = key(name);
  // The size first, then the bytes straight into the string; an object replaced in between by a
  // larger one is read again.
  for (int attempt = 0;; ++attempt) {
    const autotune::ObjectInfo info = store_->stat(k);
    std::string out(static_cast<std::size_t>(info.size), '\0');
    try {
      const autotune::ObjectInfo got = store_->get_into(k, out.data(), out.size());
      out.resize(static_cast<std::size_t>(got.size));
      return out;
    } catch (const Error &e) {
      if (e.code() != Errc::invalid_argument || attempt >= 10) throw;
    }
  }
}

std::vector<std::string> TierSnapshotStore::list() const {
  const std::string pre = opt_.prefix + "/";
  std::vector<std::string> out;
  for (const auto &o : store_->list(pre)) {
    std::string name = o.key.substr(pre.size());
    if (name.find('/') == std::string::npos) out.push_back(std::move(name));
  }
  return out;
}

void TierSnapshotStore::remove(const std::string &name) { store_->remove(key(name)); }

autotune::ObjectInfo TierSnapshotStore::stat(const std::string &name) const {
  return store_->stat(key(name));
}

std::size_t TierSnapshotStore::prune(int keep) {
  if (keep < 1) return 0;
  std::string latest;
  try {
    latest = get("latest");
  } catch (const Error &e) {
    if (e.code() == Errc::not_found) return 0;
    throw;
  }
  while (!latest.empty() && (latest.back() == '\n' || latest.back() == ' ')) latest.pop_back();
  if (!is_snapshot_id(latest)) return 0;  // nothing is known to be current: remove nothing
  const std::vector<std::string> names = list();
  std::set<std::string> complete;
  for (const auto &n : names)
    if (n == id_of(n) + ".manifest" && !id_of(n).empty() && id_of(n) < latest)
      complete.insert(id_of(n));
  std::set<std::string> kept = {latest};
  for (auto it = complete.rbegin(); it != complete.rend() && static_cast<int>(kept.size()) < keep;
       ++it)
    kept.insert(*it);
  std::size_t removed = 0;
  // Manifests first, so that a snapshot interrupted half-way through its removal is no longer
  // complete.
  for (int pass = 0; pass < 2; ++pass)
    for (const auto &n : names) {
      const std::string id = id_of(n);
      if (id.empty() || kept.count(id)) continue;
      const bool manifest = n == id + ".manifest";
      if (manifest != (pass == 0)) continue;
      removed += store_->remove(key(n)) ? 1 : 0;
    }
  return removed;
}

}  // namespace ssp
