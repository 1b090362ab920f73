// libssp's checkpoint manifest (libssp/manifest.cc): a restore or `verify_snapshot()` reads
// `latest`, then "<id>.manifest" (JSON, ssp-snapshot/1 or /2), then every part it lists.  A
// snapshot may come from a copy a user staged into a burst buffer, so all of it is untrusted.
//
// Input: the manifest's text; bytes after a NUL, if any, are stored as the part
// "<id>.executor-0.queue" (its frame is read by unframe_part).  The store also holds a valid
// scheduler part and a valid shard, which a manifest may list (tests/fuzz/manifest has seeds
// that do).
#include <map>
#include <string>

#include "codec.hpp"
#include "fuzz.hpp"
#include "manifest.hpp"
#include "ssp/snapshot.hpp"

using namespace ssp;

namespace {

class MemoryStore : public SnapshotStore {
 public:
  void put(const std::string &name, std::string_view bytes) override { objects_[name] = std::string(bytes); }
  std::string get(const std::string &name) const override {
    auto it = objects_.find(name);
    if (it == objects_.end()) throw Error(Errc::not_found, "no object '" + name + "'");
    return it->second;
  }
  std::vector<std::string> list() const override {
    std::vector<std::string> out;
    for (const auto &o : objects_) out.push_back(o.first);
    return out;
  }
  void remove(const std::string &name) override { objects_.erase(name); }

 private:
  std::map<std::string, std::string> objects_;
};

constexpr const char *kId = "c000000000001";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string_view in = fuzz::as_text(data, size);
  const auto nul = in.find('\0');
  MemoryStore store;
  store.put("latest", std::string(kId) + "\n");
  store.put(std::string(kId) + ".manifest", in.substr(0, nul));
  // payloads "sched" and "shard": CRC-32 455295d4 and 9801adcc, 25 bytes framed
  store.put(std::string(kId) + ".scheduler", frame_part(PartKind::scheduler, "sched"));
  store.put(std::string(kId) + ".table-0.shard-0", frame_part(PartKind::shard, "shard"));
  if (nul != std::string_view::npos) store.put(std::string(kId) + ".executor-0.queue", in.substr(nul + 1));

  fuzz::refused([&] { (void)verify_snapshot(store); });
  fuzz::refused([&] { (void)verify_snapshot(store, kId); });
  fuzz::refused([&] {
    SnapshotReader r(store);
    for (const PartSum &p : r.parts()) {
      PartKind k;
      if (part_kind_of(p.name, &k)) fuzz::refused([&] { (void)r.part(p.name, k); });
    }
  });
  (void)list_snapshots(store);
  return 0;
}
