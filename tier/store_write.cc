// Writing objects.  put: validate, then (1) under the store lock scan, make room on the fastest
// tier by demotion when the policy wants more of it (store_demote.cc), split the object with
// plan_placement (placement.hpp), allocate its pieces and write a flock'd reservation; (2)
// without the lock write the pieces (store_pieces.cc), in parallel for bandwidth-proportional
// placement, and make them durable; (3) write the record durably, then commit it under the lock.
// commit_record is the commit itself (a rename over objects/<key> once the previous version's
// readers are gone), shared with demotion; remove and remove_files delete an object and the disk
// files of a replaced version.  The step_hook names the steps for the crash tests.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "autotune/error.hpp"
#include "autotune/log.hpp"
#include "autotune/tier.hpp"
#include "tier/fs.hpp"
#include "tier/placement.hpp"
#include "tier/record.hpp"
#include "tier/store_impl.hpp"

namespace autotune {

using tierfs::Fd;
using tierfs::FileLock;
using tierfs::join;

namespace {

// Opens once every disk piece has been copied (or has failed).
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  int left = 0;
  void wait() {
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, [&] { return left <= 0; });
  }
  // Counts one piece down exactly once: when told, or at the end of its scope.
  class Opener {
   public:
    explicit Opener(Gate &g) : g_(g) {}
    ~Opener() { now(); }
    void now() {
      if (done_) return;
      done_ = true;
      std::lock_guard<std::mutex> l(g_.m);
      if (--g_.left <= 0) g_.cv.notify_all();
    }

   private:
    Gate &g_;
    bool done_ = false;
  };
};

}  // namespace

ObjectInfo TierStore::Impl::put(std::string_view key_view, const std::vector<ConstBytes> &segs,
                                PlacementPolicy policy) {
  validate_tier_key(key_view);
  const std::string key(key_view);
  std::uint64_t total = 0;
  for (const auto &s : segs) {
    if (!s.data && s.size) throw_invalid("put " + shown(key) + ": a segment has no data");
    total += s.size;
  }
  ObjectRecord rec;
  rec.key = key;
  rec.id = new_id();
  rec.size = total;
  rec.created_ns = now_ns();
  const std::string resv_path = join(pending_dir, rec.id + ".resv");
  const std::string tmp_path = join(pending_dir, rec.id + ".rec");
  Fd resv;
  std::vector<std::string> created;
  bool committed = false;
  auto cleanup = [&] {
    if (!committed) {
      for (const auto &f : created) ::unlink(f.c_str());
      ::unlink(tmp_path.c_str());
    }
    if (resv) ::unlink(resv_path.c_str());
  };

  try {
    // 1. Plan and reserve (locked).
    {
      Fd lfd = open_lock();
      FileLock lk(lfd.get(), FileLock::exclusive, lock_path);
      Scan s = scan(true);
      if (s.found_dead) cleanup_orphans(s);
      // A pool deleted or replaced since the open (its objects are lost to every other process)
      // takes nothing more.
      const auto gone = pools_gone();
      const auto rooms_now = [&] {
        auto r = rooms(s);
        for (size_t i = 0; i < tiers.size(); ++i)
          if (gone[i]) {
            r[i].free = 0;
            log(LogLevel::error, "tier '" + tiers[i].spec.name + "' (pmem): its pool " +
                                     tiers[i].pool +
                                     " was deleted or replaced while the store was open; " +
                                     shown(key) + " is placed on the other tiers");
          }
        return r;
      };
      auto room = rooms_now();
      // No demotion while a pool is lost or gone: nothing can be moved off or onto it.
      const bool pool_lost =
          std::any_of(tiers.begin(), tiers.end(), [](const Tier &t) { return t.lost; }) ||
          std::find(gone.begin(), gone.end(), true) != gone.end();
      if (opt.demotion && tiers.size() > 1 && total > 0 && !pool_lost) {
        // What the policy would give the fastest tier if cold objects made room there.
        auto ideal_room = room;
        std::uint64_t movable = 0;
        for (size_t i = 0; i < s.records.size(); ++i)
          if (s.records[i].key != key)
            for (const auto &p : s.records[i].pieces)
              if (p.tier == tiers[0].spec.name) movable += round_page(p.length);
        ideal_room[0].free = std::min<std::uint64_t>(
            room[0].free + movable, tiers[0].spec.capacity / kTierPage * kTierPage);
        const auto ideal = plan_placement(policy, total, ideal_room, opt.min_part);
        const std::uint64_t want0 = ideal.empty() ? 0 : round_page(ideal[0]);
        if (want0 > room[0].free) {
          demote_locked(s, want0, key);
          s = scan(true);
          room = rooms_now();
        }
      }
      const auto shares = plan_placement(policy, total, room, opt.min_part);
      if (shares.empty()) throw Error(Errc::no_space, no_space_message(key, total, s));
      std::uint64_t at = 0;
      for (size_t i = 0; i < tiers.size(); ++i) {
        if (shares[i] == 0) continue;
        PieceRecord p;
        p.tier = tiers[i].spec.name;
        p.offset = at;
        p.length = shares[i];
        if (tiers[i].spec.kind == TierKind::pmem) {
          auto gaps = pmem_gaps(s, i);
          p.extents = alloc_pmem(gaps, p.length);
        } else {
          p.file = rec.id + "." + tiers[i].spec.name;
        }
        at += p.length;
        rec.pieces.push_back(std::move(p));
      }
      // Pieces in offset order are in tier order (fastest first).
      if (!rec.pieces.empty()) {
        resv = tierfs::open_file(resv_path, O_RDWR | O_CREAT | O_EXCL, 0600);
        // Blocking: a scan without the store lock (list) may hold it for a moment.  The lock
        // lives as long as `resv` is open (it is released by the close, or by our death).
        FileLock(resv.get(), FileLock::exclusive, resv_path).release();
        // No fsync: a reservation only matters while its writer lives (after a power loss
        // every writer is gone and what it wrote is unreferenced, hence free).
        const std::string text = encode_record(rec);
        tierfs::write_all(resv.get(), text.data(), text.size(), resv_path);
      }
    }
    hook("reserved");

    // 2. Write the pieces (unlocked).  fill-fastest: one tier after the other.
    // bandwidth-proportional (and auto, when it splits): in parallel, one thread per piece; the memory-mapped (pmem)
    // pieces start once the disk pieces' bytes are handed to the kernel, so that copying them
    // overlaps the disks' wait for their device (the write-back and fsync) instead of competing
    // with the disks' own copying for the same cores and memory bandwidth.
    std::vector<std::function<void()>> tasks;
    Gate gate;
    for (auto &p : rec.pieces)
      if (!p.file.empty()) ++gate.left;
    for (auto &p : rec.pieces) {
      Tier &t = tier_of(p, key);
      if (!p.file.empty()) {
        created.push_back(join(t.data_dir, p.file));
        tasks.push_back([&, pp = &p, tt = &t] {
          Gate::Opener open(gate);
          pp->hash = write_piece(*tt, *pp, segs, pp->offset, [&] { open.now(); });
        });
      } else {
        const bool wait = policy != PlacementPolicy::fill_fastest;
        tasks.push_back([&, pp = &p, tt = &t, wait] {
          if (wait) gate.wait();
          pp->hash = write_piece(*tt, *pp, segs, pp->offset);
        });
      }
    }
    run_tasks(tasks, policy != PlacementPolicy::fill_fastest);
    hook("written");
    std::set<std::string> dirs;
    for (const auto &p : rec.pieces)
      if (!p.file.empty()) dirs.insert(tier_of(p, key).data_dir);
    for (const auto &d : dirs) tierfs::fsync_dir(d);
    hook("persisted");

    // 3. The record, durable, then the commit (locked).
    {
      Fd fd = tierfs::open_file(tmp_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
      const std::string text = encode_record(rec);
      tierfs::write_all(fd.get(), text.data(), text.size(), tmp_path);
      tierfs::fsync_fd(fd.get(), tmp_path);
    }
    hook("record-written");
    {
      Fd lfd = open_lock();
      FileLock lk(lfd.get(), FileLock::exclusive, lock_path);
      commit_record(rec, tmp_path, committed);
      if (resv) {
        ::unlink(resv_path.c_str());
        resv.reset();
      }
    }
  } catch (...) {
    try {
      Fd lfd = open_lock();
      FileLock lk(lfd.get(), FileLock::exclusive, lock_path);
      cleanup();
    } catch (...) {
      cleanup();
    }
    throw;
  }
  return info_of(rec, rec.created_ns);
}

// ---------------------------------------------------------------------------------------------
// Commit and removal (remove_files and commit_record run with the store lock held)

void TierStore::Impl::remove_files(const ObjectRecord &r, const ObjectRecord *keep) {
  for (const auto &p : r.pieces) {
    if (p.file.empty()) continue;
    bool kept = false;
    if (keep)
      for (const auto &q : keep->pieces) kept = kept || q.file == p.file;
    if (kept) continue;
    const int i = tier_index(p.tier);
    if (i >= 0) ::unlink(join(tiers[static_cast<size_t>(i)].data_dir, p.file).c_str());
  }
}

// Rename `tmp` (a durable record of `r`) over objects/<key>; waits for the readers of the
// previous version, then deletes that version's disk files that `r` does not use.
void TierStore::Impl::commit_record(const ObjectRecord &r, const std::string &tmp,
                                    bool &committed) {
  const std::string name = key_to_filename(r.key);
  const std::string path = join(objects_dir, name);
  Fd old = tierfs::open_if_exists(path, O_RDONLY);
  FileLock old_lock;
  std::optional<ObjectRecord> old_rec;
  if (old) {
    old_lock = FileLock(old.get(), FileLock::exclusive, path);
    try {
      ::lseek(old.get(), 0, SEEK_SET);
      old_rec = decode_record(tierfs::read_small_file(old.get(), path), path);
    } catch (const Error &e) {
      log(LogLevel::error, e.what());
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw_io(path + ": rename", errno);
  committed = true;
  tierfs::fsync_dir(objects_dir);
  hook("committed");
  if (old_rec) remove_files(*old_rec, &r);
}

bool TierStore::remove(std::string_view key) {
  validate_tier_key(key);
  Impl &m = *impl_;
  const std::string path = join(m.objects_dir, key_to_filename(key));
  Fd lfd = m.open_lock();
  FileLock lk(lfd.get(), FileLock::exclusive, m.lock_path);
  Fd fd = tierfs::open_if_exists(path, O_RDONLY);
  if (!fd) return false;
  FileLock rl(fd.get(), FileLock::exclusive, path);  // wait for readers
  std::optional<ObjectRecord> r;
  try {
    r = decode_record(tierfs::read_small_file(fd.get(), path), path);
  } catch (const Error &e) {
    log(LogLevel::error, e.what());
  }
  if (::unlink(path.c_str()) != 0) throw_io(path + ": unlink", errno);
  tierfs::fsync_dir(m.objects_dir);
  if (r) m.remove_files(*r, nullptr);
  return true;
}

}  // namespace autotune
