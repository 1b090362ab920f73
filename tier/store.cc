// The tier store (see autotune/tier.hpp for the contract).
//
// Layout of a store:
//   <pmem tier path>/pool            the pmem pool, mapped with libpmem2 (PmemMap)
//   <disk tier path>/data/<id>.<tier> one file per disk piece
//   <meta>/lock                      flock: allocation, commit, removal, demotion, cleanup
//   <meta>/objects/<key, '/'->'%'>   committed records (record.hpp); the rename into this
//                                    directory is the commit
//   <meta>/pending/<id>.resv         a put's reservation, flock'd by its writer while it lives
//   <meta>/pending/<id>.rec          a record being written, renamed into objects/ to commit
//   <meta>/bandwidth                 measured bandwidths ("<tier> <bytes per second>" lines)
//
// Free space is never stored: it is the complement of what committed records and live
// reservations use, recomputed under the lock.  So a writer that dies leaves nothing to repair
// but files nobody references, which cleanup() deletes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
// The state on the stack needs the struct definition (same library version as the header).
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "autotune/error.hpp"
#include "autotune/log.hpp"
#include "autotune/tier.hpp"
#include "autotune/units.hpp"
#include "tier/fs.hpp"
#include "tier/media.hpp"
#include "tier/placement.hpp"
#include "tier/pmem_map.hpp"
#include "tier/record.hpp"

namespace autotune {

using tierfs::Fd;
using tierfs::FileLock;
using tierfs::join;

namespace {

constexpr std::size_t kChunk = 1 << 20;             // copy + hash step
constexpr std::uint64_t kFlushStep = 8ull << 20;    // disk: write-back started every 8 MiB
constexpr std::uint64_t kProbeBytes = 16ull << 20;  // bandwidth probe
constexpr std::uint64_t kLearnMin = 4ull << 20;     // pieces that refine a measured bandwidth
constexpr double kLearnWeight = 0.3;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::uint64_t round_page(std::uint64_t n) { return (n + kTierPage - 1) / kTierPage * kTierPage; }

std::int64_t mtime_ns(const struct stat &st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
}

// Calls fn(ptr, n) for the bytes [off, off+len) of the concatenation of `segs`, in order, in
// chunks of at most kChunk that never straddle two segments.
template <typename Fn>
void for_each_chunk(const std::vector<ConstBytes> &segs, std::uint64_t off, std::uint64_t len,
                    Fn &&fn) {
  std::uint64_t base = 0;
  for (const ConstBytes &s : segs) {
    if (len == 0) break;
    const std::uint64_t end = base + s.size;
    if (off < end) {
      std::uint64_t at = off - base;
      while (at < s.size && len > 0) {
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>({kChunk, s.size - at, len}));
        fn(static_cast<const unsigned char *>(s.data) + at, n);
        at += n;
        off += n;
        len -= n;
      }
    }
    base = end;
  }
}

// Runs the tasks, in parallel (one thread each, the first on the calling thread) or one after the
// other; rethrows the first failure after all have finished.
void run_tasks(std::vector<std::function<void()>> &tasks, bool parallel) {
  std::vector<std::exception_ptr> errs(tasks.size());
  auto guarded = [&](size_t i) {
    try {
      tasks[i]();
    } catch (...) {
      errs[i] = std::current_exception();
    }
  };
  if (parallel && tasks.size() > 1) {
    std::vector<std::thread> threads;
    for (size_t i = 1; i < tasks.size(); ++i) threads.emplace_back(guarded, i);
    guarded(0);
    for (auto &t : threads) t.join();
  } else {
    for (size_t i = 0; i < tasks.size(); ++i) {
      guarded(i);
      if (errs[i]) break;
    }
  }
  for (auto &e : errs)
    if (e) std::rethrow_exception(e);
}

std::string shown(const std::string &key) { return "'" + key + "'"; }

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

void validate_tier_key(std::string_view key, std::string_view field) {
  const std::string allowed =
      "allowed: 1-200 characters from A-Z a-z 0-9 . _ - and '/' between non-empty components "
      "other than '.' and '..', not starting with '.'";
  const std::string q = std::string(field) + ": '" + std::string(key) + "'";
  if (key.empty()) throw_invalid(std::string(field) + ": the key is empty; " + allowed);
  if (key.size() > kTierKeyMax)
    throw_invalid(std::string(field) + ": the key is " + std::to_string(key.size()) +
                  " characters long; " + allowed);
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
          c == '/'))
      throw_invalid(q + " contains a character that is not allowed; " + allowed);
  if (key[0] == '.') throw_invalid(q + " starts with '.'; " + allowed);
  size_t i = 0;
  while (i <= key.size()) {
    size_t j = key.find('/', i);
    if (j == std::string_view::npos) j = key.size();
    const std::string_view comp = key.substr(i, j - i);
    if (comp.empty() || comp == "." || comp == "..")
      throw_invalid(q + " has an empty, '.' or '..' component; " + allowed);
    i = j + 1;
  }
}

TierStoreOptions TierStoreOptions::from_conf(const TierConf &conf) {
  TierStoreOptions o;
  o.tiers = conf.tiers;
  o.placement = conf.placement;
  o.demotion = conf.demotion;
  return o;
}

std::uint64_t ObjectInfo::bytes_on(std::string_view tier) const {
  std::uint64_t n = 0;
  for (const auto &p : pieces)
    if (p.tier == tier) n += p.length;
  return n;
}

// ---------------------------------------------------------------------------------------------
struct TierStore::Impl {
  struct Tier {
    TierSpec spec;
    std::string data_dir;          // disk
    std::unique_ptr<PmemMap> map;  // pmem
    double bandwidth = 0;          // guarded by mu
    double latency = 0;            // seconds a piece costs whatever its size (measured tiers)
    bool measured = false;
    std::string media;  // filled lazily by usage()
  };
  struct Cached {
    ino_t ino = 0;
    struct timespec ctime {};
    ObjectRecord rec;
    std::int64_t accessed_ns = 0;
  };
  // What committed records and live reservations hold, at one instant (under the lock).
  struct Scan {
    std::vector<ObjectRecord> records;
    std::vector<std::int64_t> accessed;  // per record
    std::vector<ObjectRecord> reserved;  // live reservations
    bool found_dead = false;             // a dead writer's reservation was seen
  };

  TierStoreOptions opt;
  std::vector<Tier> tiers;  // fastest first
  std::string meta, objects_dir, pending_dir, lock_path, bw_path;
  std::mutex mu;       // cache, bandwidths, media
  std::mutex save_mu;  // the bandwidth file
  std::map<std::string, Cached> cache;
  std::atomic<std::uint64_t> counter{0};

  explicit Impl(TierStoreOptions o);

  int tier_index(const std::string &name) const {
    for (size_t i = 0; i < tiers.size(); ++i)
      if (tiers[i].spec.name == name) return static_cast<int>(i);
    return -1;
  }
  Tier &tier_of(const PieceRecord &p, const std::string &key) {
    const int i = tier_index(p.tier);
    if (i < 0)
      throw Error(Errc::corrupt, "object " + shown(key) + " has a piece on tier '" + p.tier +
                                     "', which this store does not have");
    return tiers[static_cast<size_t>(i)];
  }
  void hook(const char *step) const {
    if (opt.step_hook) opt.step_hook(step);
  }
  std::string new_id() {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%x-%llx-%llx", static_cast<unsigned>(::getpid()),
                  static_cast<unsigned long long>(now_ns()),
                  static_cast<unsigned long long>(counter.fetch_add(1)));
    return buf;
  }
  Fd open_lock() { return tierfs::open_file(lock_path, O_RDWR | O_CREAT, 0600); }

  // -- records -------------------------------------------------------------------------------
  // The record of `name` in objects/, through the cache; nullopt when it vanished.
  std::optional<Cached> load_record(const std::string &name);
  Scan scan(bool clean_dead);
  void cleanup_orphans(const Scan &s);

  // -- space ---------------------------------------------------------------------------------
  std::vector<std::uint64_t> used_bytes(const Scan &s) const;
  std::vector<Extent> pmem_gaps(const Scan &s, size_t t) const;
  std::vector<TierRoom> rooms(const Scan &s);
  std::vector<Extent> alloc_pmem(std::vector<Extent> &gaps, std::uint64_t len) const;
  std::string no_space_message(const std::string &key, std::uint64_t size, const Scan &s);

  // -- data ----------------------------------------------------------------------------------
  // Writes and persists one piece; returns its XXH3-64.  `copied` (may be empty) is called once
  // a disk piece's bytes are all handed to the kernel, before its fsync.
  std::uint64_t write_piece(Tier &t, const PieceRecord &p, const std::vector<ConstBytes> &segs,
                            std::uint64_t seg_offset, const std::function<void()> &copied = {});
  void read_piece(Tier &t, const PieceRecord &p, unsigned char *dst, const std::string &key);
  void learn(Tier &t, std::uint64_t bytes, double seconds);

  // -- operations ----------------------------------------------------------------------------
  ObjectInfo put(std::string_view key, const std::vector<ConstBytes> &segs, PlacementPolicy policy);
  ObjectInfo get_into(std::string_view key, void *buf, std::size_t cap,
                      std::vector<unsigned char> *grow);
  std::uint64_t demote_locked(Scan &s, std::uint64_t want, const std::string &skip_key);
  bool demote_one(const ObjectRecord &victim, std::int64_t accessed, Scan &s);
  void remove_files(const ObjectRecord &r, const ObjectRecord *keep);
  void commit_record(const ObjectRecord &r, const std::string &tmp, bool &committed);
  ObjectInfo info_of(const ObjectRecord &r, std::int64_t accessed) const;

  // -- bandwidth ------------------------------------------------------------------------------
  void load_bandwidths();
  void probe(Tier &t);
  void save_bandwidths();
};

// ---------------------------------------------------------------------------------------------
// Opening

TierStore::Impl::Impl(TierStoreOptions o) : opt(std::move(o)) {
  if (opt.tiers.empty()) throw_invalid("tier store: no tiers given (at least one is needed)");
  for (size_t i = 0; i < opt.tiers.size(); ++i) {
    const TierSpec &t = opt.tiers[i];
    const std::string f = "tier '" + t.name + "'";
    validate_tier_name(t.name, "tier store: tier name");
    if (t.path.empty() || t.path[0] != '/')
      throw_invalid(f + ": Path '" + t.path + "' is not absolute");
    if (t.capacity < kTierMinCapacity)
      throw_invalid(f + ": Capacity " + std::to_string(t.capacity) + " is below the minimum 1M");
    if (t.kind == TierKind::pmem && t.capacity % kTierPage)
      throw_invalid(f + ": Capacity " + std::to_string(t.capacity) + " is not a multiple of 4K");
    for (size_t j = 0; j < i; ++j) {
      if (opt.tiers[j].name == t.name) throw_invalid(f + " is given twice");
      if (opt.tiers[j].path == t.path)
        throw_invalid(f + ": Path '" + t.path + "' is also tier '" + opt.tiers[j].name + "'");
    }
  }
  if (opt.meta_dir.empty()) {
    const TierSpec *m = &opt.tiers[0];
    for (const auto &t : opt.tiers)
      if (t.kind == TierKind::disk) {
        m = &t;
        break;
      }
    opt.meta_dir = join(m->path, "meta");
  }
  meta = opt.meta_dir;
  objects_dir = join(meta, "objects");
  pending_dir = join(meta, "pending");
  lock_path = join(meta, "lock");
  bw_path = join(meta, "bandwidth");
  for (const auto &t : opt.tiers) tierfs::make_dirs(t.path, 0700);
  tierfs::make_dirs(objects_dir, 0700);
  tierfs::make_dirs(pending_dir, 0700);

  Fd lfd = open_lock();
  FileLock lk(lfd.get(), FileLock::exclusive, lock_path);
  Scan s0 = scan(true);
  for (const TierSpec &spec : opt.tiers) {
    Tier t;
    t.spec = spec;
    t.bandwidth = static_cast<double>(spec.bandwidth);
    t.measured = spec.bandwidth == 0;
    if (spec.kind == TierKind::disk) {
      t.data_dir = join(spec.path, "data");
      tierfs::make_dirs(t.data_dir, 0700);
    } else {
      const std::string pool = join(spec.path, "pool");
      Fd fd = tierfs::open_file(pool, O_RDWR | O_CREAT, 0600);
      struct stat st;
      if (::fstat(fd.get(), &st) != 0) throw_io(pool, errno);
      const std::uint64_t have = static_cast<std::uint64_t>(st.st_size);
      if (have > spec.capacity) {
        std::uint64_t end = 0;
        for (const auto *set : {&s0.records, &s0.reserved})
          for (const auto &r : *set)
            for (const auto &p : r.pieces)
              if (p.tier == spec.name)
                for (const auto &e : p.extents) end = std::max(end, e.off + e.len);
        if (end > spec.capacity)
          throw_invalid("tier '" + spec.name + "': Capacity " + format_size(spec.capacity) +
                        " is smaller than the " + format_size(end) +
                        " of its pool that objects use; remove objects first");
      }
      if (have != spec.capacity && ::ftruncate(fd.get(), static_cast<off_t>(spec.capacity)) != 0)
        throw_io(pool + ": ftruncate", errno);
      if (opt.preallocate && have < spec.capacity) {
        const int rc = ::posix_fallocate(fd.get(), static_cast<off_t>(have),
                                         static_cast<off_t>(spec.capacity - have));
        if (rc == ENOSPC)
          throw Error(Errc::no_space, "tier '" + spec.name + "': cannot reserve " +
                                          format_size(spec.capacity) + " for the pool " + pool +
                                          ": no space left on the file system");
        if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL) throw_io(pool + ": posix_fallocate", rc);
      }
      fd.reset();
      t.map = std::make_unique<PmemMap>(pool);
    }
    tiers.push_back(std::move(t));
  }
  cleanup_orphans(s0);
  load_bandwidths();
  // Fastest first; pmem before disk when bandwidths tie.
  std::stable_sort(tiers.begin(), tiers.end(), [](const Tier &a, const Tier &b) {
    if (a.bandwidth != b.bandwidth) return a.bandwidth > b.bandwidth;
    return a.spec.kind == TierKind::pmem && b.spec.kind != TierKind::pmem;
  });
}

void TierStore::Impl::load_bandwidths() {
  // "<tier> <bytes per second> <seconds per piece>" lines.
  std::map<std::string, std::pair<double, double>> cached;
  if (Fd fd = tierfs::open_if_exists(bw_path, O_RDONLY)) {
    std::istringstream in(tierfs::read_small_file(fd.get(), bw_path));
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string name;
      double v = 0, l = 0;
      if (f >> name >> v >> l && v > 0 && std::isfinite(v) && l >= 0 && l < 10)
        cached[name] = {v, l};
    }
  }
  bool probed = false;
  for (auto &t : tiers) {
    if (!t.measured) continue;
    auto it = cached.find(t.spec.name);
    if (it != cached.end()) {
      t.bandwidth = it->second.first;
      t.latency = it->second.second;
    } else {
      probe(t);
      probed = true;
    }
  }
  if (probed) save_bandwidths();
}

// Bandwidth: one timed durable write of kProbeBytes (after a first pass that takes the page
// faults); latency: the best of three durable writes of one page.
void TierStore::Impl::probe(Tier &t) {
  const std::uint64_t n = std::min<std::uint64_t>(kProbeBytes, t.spec.capacity / 4);
  std::vector<unsigned char> buf(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<unsigned char>(i * 131 + 7);
  const std::string path = join(t.spec.path, ".probe." + std::to_string(::getpid()));
  double secs = 0, lat = 1e9;
  try {
    Fd fd = tierfs::open_file(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (t.spec.kind == TierKind::pmem) {
      if (::ftruncate(fd.get(), static_cast<off_t>(n)) != 0) throw_io(path, errno);
      PmemMap m(path);
      m.copy_in(0, buf.data(), buf.size());  // first touch: page faults, not the medium
      m.persist_copied(0, buf.size());
      m.drain();
      const auto t0 = std::chrono::steady_clock::now();
      for (std::uint64_t off = 0; off < n; off += kChunk)
        m.copy_in(off, buf.data() + off,
                  static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, n - off)));
      m.persist_copied(0, buf.size());
      m.drain();
      secs = seconds_since(t0);
      for (int i = 0; i < 3; ++i) {
        const auto t1 = std::chrono::steady_clock::now();
        m.copy_in(0, buf.data(), kTierPage);
        m.persist_copied(0, kTierPage);
        m.drain();
        lat = std::min(lat, seconds_since(t1));
      }
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      tierfs::write_all(fd.get(), buf.data(), buf.size(), path);
      tierfs::fsync_fd(fd.get(), path);
      secs = seconds_since(t0);
      // What a disk piece costs whatever its size: create, write, fsync, fsync the directory.
      for (int i = 0; i < 3; ++i) {
        const std::string f = path + "." + std::to_string(i);
        const auto t1 = std::chrono::steady_clock::now();
        {
          Fd pf = tierfs::open_file(f, O_WRONLY | O_CREAT | O_EXCL, 0600);
          tierfs::write_all(pf.get(), buf.data(), kTierPage, f);
          tierfs::fsync_fd(pf.get(), f);
        }
        tierfs::fsync_dir(t.spec.path);
        lat = std::min(lat, seconds_since(t1));
        ::unlink(f.c_str());
      }
    }
  } catch (...) {
    ::unlink(path.c_str());
    throw;
  }
  ::unlink(path.c_str());
  t.latency = lat;
  t.bandwidth = static_cast<double>(n) / std::max(secs - lat, 1e-6);
  log(LogLevel::verbose, "tier '" + t.spec.name + "': measured " +
                             std::to_string(static_cast<std::uint64_t>(t.bandwidth) >> 20) +
                             " MiB/s and " + std::to_string(static_cast<long>(lat * 1e6)) +
                             " us per piece");
}

void TierStore::Impl::save_bandwidths() {
  std::lock_guard<std::mutex> saving(save_mu);
  std::string s;
  {
    std::lock_guard<std::mutex> g(mu);
    for (const auto &t : tiers)
      if (t.measured)
        s += t.spec.name + " " + std::to_string(static_cast<std::uint64_t>(t.bandwidth)) + " " +
             std::to_string(t.latency) + "\n";
  }
  try {
    tierfs::write_file_atomic(bw_path, s, 0600);
  } catch (const Error &e) {
    log(LogLevel::info, std::string("cannot remember measured bandwidths: ") + e.what());
  }
}

void TierStore::Impl::learn(Tier &t, std::uint64_t bytes, double seconds) {
  if (!t.measured || bytes < kLearnMin || seconds <= 0) return;
  const double obs = static_cast<double>(bytes) / std::max(seconds - t.latency, seconds / 2);
  bool save = false;
  {
    std::lock_guard<std::mutex> g(mu);
    const double before = t.bandwidth;
    t.bandwidth = (1 - kLearnWeight) * t.bandwidth + kLearnWeight * obs;
    save = std::fabs(t.bandwidth - before) > 0.2 * before;
  }
  if (save) save_bandwidths();
}

// ---------------------------------------------------------------------------------------------
// Records and space

std::optional<TierStore::Impl::Cached> TierStore::Impl::load_record(const std::string &name) {
  const std::string path = join(objects_dir, name);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::nullopt;
    throw_io(path, errno);
  }
  {
    std::lock_guard<std::mutex> g(mu);
    auto it = cache.find(name);
    if (it != cache.end() && it->second.ino == st.st_ino &&
        it->second.ctime.tv_sec == st.st_ctim.tv_sec &&
        it->second.ctime.tv_nsec == st.st_ctim.tv_nsec)
      return it->second;
  }
  Fd fd = tierfs::open_if_exists(path, O_RDONLY);
  if (!fd) return std::nullopt;
  if (::fstat(fd.get(), &st) != 0) throw_io(path, errno);
  Cached c;
  c.ino = st.st_ino;
  c.ctime = st.st_ctim;
  c.accessed_ns = mtime_ns(st);
  c.rec = decode_record(tierfs::read_small_file(fd.get(), path), path);
  std::lock_guard<std::mutex> g(mu);
  cache[name] = c;
  return c;
}

TierStore::Impl::Scan TierStore::Impl::scan(bool clean_dead) {
  Scan s;
  std::set<std::string> names;
  for (const std::string &name : tierfs::list_dir(objects_dir)) {
    if (name.empty() || name[0] == '.') continue;
    names.insert(name);
    try {
      auto c = load_record(name);
      if (!c) continue;
      s.records.push_back(std::move(c->rec));
      s.accessed.push_back(c->accessed_ns);
    } catch (const Error &e) {
      // Its space cannot be known: leave the record for verify() to report.
      log(LogLevel::error, e.what());
    }
  }
  {
    std::lock_guard<std::mutex> g(mu);
    for (auto it = cache.begin(); it != cache.end();)
      it = names.count(it->first) ? std::next(it) : cache.erase(it);
  }
  std::set<std::string> live;
  std::vector<std::string> entries = tierfs::list_dir(pending_dir);
  for (const std::string &name : entries) {
    if (name.size() <= 5 || name.compare(name.size() - 5, 5, ".resv") != 0) continue;
    const std::string path = join(pending_dir, name);
    Fd fd = tierfs::open_if_exists(path, O_RDWR);
    if (!fd) continue;
    // Without the store lock a writer may not have locked its new reservation yet: only a
    // scan under the lock (clean_dead) can tell a dead writer's reservation from a live one.
    if (clean_dead && FileLock::try_lock(fd.get(), FileLock::exclusive)) {
      // Its writer is gone (flock is released when a process dies).
      s.found_dead = true;
      if (clean_dead) ::unlink(path.c_str());
      continue;
    }
    live.insert(name.substr(0, name.size() - 5));
    try {
      s.reserved.push_back(decode_record(tierfs::read_small_file(fd.get(), path), path));
    } catch (const Error &e) {
      log(LogLevel::error, e.what());
    }
  }
  if (clean_dead)
    for (const std::string &name : entries) {
      if (name.size() <= 4 || name.compare(name.size() - 4, 4, ".rec") != 0) continue;
      if (!live.count(name.substr(0, name.size() - 4))) ::unlink(join(pending_dir, name).c_str());
    }
  return s;
}

void TierStore::Impl::cleanup_orphans(const Scan &s) {
  std::set<std::string> referenced;
  for (const auto *set : {&s.records, &s.reserved})
    for (const auto &r : *set)
      for (const auto &p : r.pieces)
        if (!p.file.empty()) referenced.insert(p.file);
  for (const auto &t : tiers) {
    if (t.spec.kind != TierKind::disk) continue;
    for (const std::string &name : tierfs::list_dir(t.data_dir))
      if (!referenced.count(name)) {
        log(LogLevel::verbose, "tier '" + t.spec.name + "': removing unreferenced " + name);
        ::unlink(join(t.data_dir, name).c_str());
      }
  }
}

std::vector<std::uint64_t> TierStore::Impl::used_bytes(const Scan &s) const {
  std::vector<std::uint64_t> used(tiers.size(), 0);
  for (const auto *set : {&s.records, &s.reserved})
    for (const auto &r : *set)
      for (const auto &p : r.pieces) {
        const int i = tier_index(p.tier);
        if (i < 0) continue;
        used[static_cast<size_t>(i)] += p.file.empty() ? round_page(p.length) : p.length;
      }
  return used;
}

std::vector<Extent> TierStore::Impl::pmem_gaps(const Scan &s, size_t t) const {
  std::vector<Extent> busy;
  for (const auto *set : {&s.records, &s.reserved})
    for (const auto &r : *set)
      for (const auto &p : r.pieces)
        if (p.tier == tiers[t].spec.name)
          for (const auto &e : p.extents) busy.push_back(e);
  std::sort(busy.begin(), busy.end(),
            [](const Extent &a, const Extent &b) { return a.off < b.off; });
  std::vector<Extent> gaps;
  std::uint64_t at = 0;
  const std::uint64_t end = tiers[t].map->size() / kTierPage * kTierPage;
  for (const auto &e : busy) {
    if (e.off > at) gaps.push_back({at, std::min(e.off, end) - at});
    at = std::max(at, e.off + e.len);
    if (at >= end) break;
  }
  if (at < end) gaps.push_back({at, end - at});
  return gaps;
}

std::vector<TierRoom> TierStore::Impl::rooms(const Scan &s) {
  std::vector<TierRoom> out(tiers.size());
  const auto used = used_bytes(s);
  std::lock_guard<std::mutex> g(mu);
  for (size_t i = 0; i < tiers.size(); ++i) {
    out[i].bandwidth = std::max(tiers[i].bandwidth, 1.0);
    out[i].latency = tiers[i].latency;
    if (tiers[i].spec.kind == TierKind::pmem) {
      std::uint64_t f = 0;
      for (const auto &gap : pmem_gaps(s, i)) f += gap.len;
      out[i].free = f;
      out[i].align = kTierPage;
    } else {
      out[i].free = tiers[i].spec.capacity > used[i] ? tiers[i].spec.capacity - used[i] : 0;
      out[i].align = 1;
    }
  }
  return out;
}

// Best fit in one gap when possible, else the largest gaps first.
std::vector<Extent> TierStore::Impl::alloc_pmem(std::vector<Extent> &gaps,
                                                std::uint64_t len) const {
  std::uint64_t need = round_page(len);
  std::vector<Extent> out;
  size_t best = gaps.size();
  for (size_t i = 0; i < gaps.size(); ++i)
    if (gaps[i].len >= need && (best == gaps.size() || gaps[i].len < gaps[best].len)) best = i;
  if (best != gaps.size()) {
    out.push_back({gaps[best].off, need});
    gaps[best].off += need;
    gaps[best].len -= need;
    return out;
  }
  std::vector<size_t> order(gaps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return gaps[a].len > gaps[b].len; });
  for (size_t i : order) {
    if (need == 0) break;
    const std::uint64_t take = std::min(need, gaps[i].len);
    if (take == 0) continue;
    out.push_back({gaps[i].off, take});
    gaps[i].off += take;
    gaps[i].len -= take;
    need -= take;
  }
  if (need != 0) throw Error(Errc::internal, "pmem allocation does not match the free space");
  std::sort(out.begin(), out.end(), [](const Extent &a, const Extent &b) { return a.off < b.off; });
  return out;
}

std::string TierStore::Impl::no_space_message(const std::string &key, std::uint64_t size,
                                              const Scan &s) {
  const auto r = rooms(s);
  std::string m = "put " + shown(key) + ": " + format_size(size) +
                  " does not fit in the free space of the store's tiers (";
  for (size_t i = 0; i < tiers.size(); ++i)
    m += (i ? ", " : "") + tiers[i].spec.name + ": " + format_size(r[i].free) + " free of " +
         format_size(tiers[i].spec.capacity);
  return m + ")";
}

ObjectInfo TierStore::Impl::info_of(const ObjectRecord &r, std::int64_t accessed) const {
  ObjectInfo o;
  o.key = r.key;
  o.size = r.size;
  o.checksum = object_digest(r.pieces);
  o.created_ns = r.created_ns;
  o.accessed_ns = accessed;
  for (const auto &p : r.pieces) o.pieces.push_back({p.tier, p.offset, p.length});
  return o;
}

// ---------------------------------------------------------------------------------------------
// Data

std::uint64_t TierStore::Impl::write_piece(Tier &t, const PieceRecord &p,
                                           const std::vector<ConstBytes> &segs,
                                           std::uint64_t seg_offset,
                                           const std::function<void()> &copied) {
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  const auto t0 = std::chrono::steady_clock::now();
  if (t.spec.kind == TierKind::pmem) {
    size_t ext = 0;
    std::uint64_t in_ext = 0;
    for_each_chunk(segs, seg_offset, p.length, [&](const unsigned char *src, std::size_t n) {
      XXH3_64bits_update(&st, src, n);
      while (n > 0) {
        const std::size_t k =
            static_cast<std::size_t>(std::min<std::uint64_t>(n, p.extents[ext].len - in_ext));
        t.map->copy_in(p.extents[ext].off + in_ext, src, k);
        src += k;
        n -= k;
        in_ext += k;
        if (in_ext == p.extents[ext].len) {
          ++ext;
          in_ext = 0;
        }
      }
    });
    std::uint64_t left = p.length;
    for (const auto &e : p.extents) {
      const std::uint64_t n = std::min(left, e.len);
      t.map->persist_copied(e.off, static_cast<std::size_t>(n));
      left -= n;
    }
    t.map->drain();
  } else {
    const std::string path = join(t.data_dir, p.file);
    Fd fd = tierfs::open_file(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    // Start the write-back of each written stretch at once (sync_file_range), so that the
    // device works while the rest is copied and fsync has little left to wait for.
    std::uint64_t at = 0, flushed = 0;
    for_each_chunk(segs, seg_offset, p.length, [&](const unsigned char *src, std::size_t n) {
      XXH3_64bits_update(&st, src, n);
      tierfs::pwrite_all(fd.get(), src, n, at, path);
      at += n;
      if (at - flushed >= kFlushStep) {
        ::sync_file_range(fd.get(), static_cast<off_t>(flushed), static_cast<off_t>(at - flushed),
                          SYNC_FILE_RANGE_WRITE);
        flushed = at;
      }
    });
    if (copied) copied();
    tierfs::fsync_fd(fd.get(), path);
  }
  const double secs = seconds_since(t0);
  if (log_enabled())
    log(LogLevel::debug, "tier '" + t.spec.name + "': wrote " + std::to_string(p.length) +
                             " bytes in " + std::to_string(secs) + " s");
  learn(t, p.length, secs);
  return XXH3_64bits_digest(&st);
}

void TierStore::Impl::read_piece(Tier &t, const PieceRecord &p, unsigned char *dst,
                                 const std::string &key) {
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  if (t.spec.kind == TierKind::pmem) {
    std::uint64_t left = p.length;
    for (const auto &e : p.extents) {
      if (e.off + e.len > t.map->size())
        throw Error(Errc::corrupt, "object " + shown(key) +
                                       ": an extent lies outside the pool of tier '" + t.spec.name +
                                       "'");
      for (std::uint64_t at = 0; at < e.len && left > 0;) {
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>({kChunk, e.len - at, left}));
        t.map->copy_out(dst, e.off + at, n);
        XXH3_64bits_update(&st, dst, n);
        dst += n;
        at += n;
        left -= n;
      }
    }
  } else {
    const std::string path = join(t.data_dir, p.file);
    Fd fd;
    try {
      fd = tierfs::open_file(path, O_RDONLY);
    } catch (const Error &e) {
      if (e.code() != Errc::not_found) throw;
      throw Error(Errc::corrupt, "object " + shown(key) + ": its piece on tier '" + t.spec.name +
                                     "' (" + path + ") is missing");
    }
    ::posix_fadvise(fd.get(), 0, static_cast<off_t>(p.length), POSIX_FADV_SEQUENTIAL);
    for (std::uint64_t at = 0; at < p.length;) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(4 * kChunk, p.length - at));
      tierfs::pread_all(fd.get(), dst, n, at, path);
      XXH3_64bits_update(&st, dst, n);
      dst += n;
      at += n;
    }
  }
  if (XXH3_64bits_digest(&st) != p.hash)
    throw Error(Errc::corrupt, "object " + shown(key) + ": checksum mismatch in bytes " +
                                   std::to_string(p.offset) + ".." +
                                   std::to_string(p.offset + p.length) + " on tier '" +
                                   t.spec.name + "'");
}

// ---------------------------------------------------------------------------------------------
// Commit, removal, demotion (all with the store lock held)

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

bool TierStore::Impl::demote_one(const ObjectRecord &victim, std::int64_t accessed, Scan &s) {
  const size_t from = 0;
  ObjectRecord moved = victim;
  moved.id = new_id();
  std::vector<std::string> created;
  auto rollback = [&] {
    for (const auto &f : created) ::unlink(f.c_str());
  };
  try {
    for (auto &p : moved.pieces) {
      if (p.tier != tiers[from].spec.name) continue;
      // The next slower tier with room for the whole piece.
      const auto room = rooms(s);
      size_t to = tiers.size();
      for (size_t j = from + 1; j < tiers.size() && to == tiers.size(); ++j)
        if ((tiers[j].spec.kind == TierKind::pmem ? round_page(p.length) : p.length) <=
            room[j].free)
          to = j;
      if (to == tiers.size()) {
        rollback();
        return false;
      }
      Tier &src = tiers[from];
      Tier &dst = tiers[to];
      // Copy through a bounded buffer, checking the bytes against the piece's checksum.
      PieceRecord np = p;
      np.tier = dst.spec.name;
      np.extents.clear();
      np.file.clear();
      if (dst.spec.kind == TierKind::pmem) {
        auto gaps = pmem_gaps(s, to);
        np.extents = alloc_pmem(gaps, p.length);
      } else {
        np.file = moved.id + "." + dst.spec.name;
        created.push_back(join(dst.data_dir, np.file));
      }
      std::vector<unsigned char> buf;
      std::vector<ConstBytes> seg;
      if (src.map) {  // straight from the mapping; the checksum of what was written tells
        std::uint64_t left = p.length;
        for (const auto &e : p.extents) {
          if (e.off + e.len > src.map->size())
            throw Error(Errc::corrupt,
                        "object " + shown(victim.key) + ": an extent lies outside the pool");
          const std::uint64_t n = std::min(left, e.len);
          seg.push_back({src.map->data() + e.off, static_cast<std::size_t>(n)});
          left -= n;
        }
      } else {
        buf.resize(static_cast<std::size_t>(p.length));
        read_piece(src, p, buf.data(), victim.key);
        seg.push_back({buf.data(), buf.size()});
      }
      np.hash = write_piece(dst, np, seg, 0);
      if (np.hash != p.hash)
        throw Error(Errc::corrupt, "object " + shown(victim.key) + ": checksum mismatch in bytes " +
                                       std::to_string(p.offset) + ".." +
                                       std::to_string(p.offset + p.length) + " on tier '" +
                                       src.spec.name + "' (found while demoting it)");
      if (dst.spec.kind == TierKind::disk) tierfs::fsync_dir(dst.data_dir);
      // Account the new piece so that the next piece's room is right.
      ObjectRecord acct;
      acct.pieces.push_back(np);
      s.reserved.push_back(acct);
      p = np;
    }
    hook("demote-written");
    const std::string tmp = join(pending_dir, moved.id + ".rec");
    {
      Fd fd = tierfs::open_file(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
      const std::string text = encode_record(moved);
      tierfs::write_all(fd.get(), text.data(), text.size(), tmp);
      // The moved object stays as cold as it was.
      struct timespec ts[2];
      ts[0].tv_sec = static_cast<time_t>(accessed / 1000000000);
      ts[0].tv_nsec = static_cast<long>(accessed % 1000000000);
      ts[1] = ts[0];
      ::futimens(fd.get(), ts);
      tierfs::fsync_fd(fd.get(), tmp);
    }
    bool committed = false;
    try {
      commit_record(moved, tmp, committed);
    } catch (...) {
      if (!committed) ::unlink(tmp.c_str());
      throw;
    }
    created.clear();
  } catch (...) {
    rollback();
    throw;
  }
  log(LogLevel::verbose,
      "demoted " + shown(victim.key) + " off tier '" + tiers[from].spec.name + "'");
  return true;
}

std::uint64_t TierStore::Impl::demote_locked(Scan &s, std::uint64_t want,
                                             const std::string &skip_key) {
  if (tiers.size() < 2) return 0;
  std::uint64_t freed = 0;
  auto free0 = [&] { return rooms(s)[0].free; };
  std::uint64_t f = free0();
  if (f >= want) return 0;
  // Coldest first.
  std::vector<size_t> order(s.records.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (s.accessed[a] != s.accessed[b]) return s.accessed[a] < s.accessed[b];
    return s.records[a].key < s.records[b].key;
  });
  for (size_t i : order) {
    if (f >= want) break;
    const ObjectRecord &r = s.records[i];
    if (r.key == skip_key) continue;
    bool on0 = false;
    for (const auto &p : r.pieces) on0 = on0 || p.tier == tiers[0].spec.name;
    if (!on0) continue;
    if (!demote_one(r, s.accessed[i], s)) continue;
    s = scan(true);
    const std::uint64_t nf = free0();
    freed += nf > f ? nf - f : 0;
    f = nf;
    // Records were re-read: restart from the new order.
    return freed + demote_locked(s, want, skip_key);
  }
  return freed;
}

// ---------------------------------------------------------------------------------------------
// put / get

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
      auto room = rooms(s);
      if (opt.demotion && tiers.size() > 1 && total > 0) {
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
          room = rooms(s);
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
    // bandwidth-proportional: in parallel, one thread per piece; the memory-mapped (pmem)
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
        const bool wait = policy == PlacementPolicy::bandwidth_proportional;
        tasks.push_back([&, pp = &p, tt = &t, wait] {
          if (wait) gate.wait();
          pp->hash = write_piece(*tt, *pp, segs, pp->offset);
        });
      }
    }
    run_tasks(tasks, policy == PlacementPolicy::bandwidth_proportional);
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

ObjectInfo TierStore::Impl::get_into(std::string_view key_view, void *buf, std::size_t cap,
                                     std::vector<unsigned char> *grow) {
  validate_tier_key(key_view);
  const std::string key(key_view);
  const std::string path = join(objects_dir, key_to_filename(key));
  for (int attempt = 0; attempt < 100; ++attempt) {
    Fd fd = tierfs::open_if_exists(path, O_RDONLY);
    if (!fd) throw Error(Errc::not_found, "no object " + shown(key) + " in the store");
    FileLock lk(fd.get(), FileLock::shared, path);
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) throw_io(path, errno);
    if (st.st_nlink == 0) continue;  // replaced or removed while we waited
    const ObjectRecord r = decode_record(tierfs::read_small_file(fd.get(), path), path);
    if (r.key != key) throw Error(Errc::corrupt, path + ": holds the record of " + shown(r.key));
    if (grow) {
      grow->resize(static_cast<std::size_t>(r.size));
      buf = grow->data();
      cap = grow->size();
    }
    if (r.size > cap)
      throw_invalid("get " + shown(key) + ": the object is " + std::to_string(r.size) +
                    " bytes, the buffer " + std::to_string(cap));
    std::vector<std::function<void()>> tasks;
    for (const auto &p : r.pieces) {
      Tier &t = tier_of(p, key);
      unsigned char *dst = static_cast<unsigned char *>(buf) + p.offset;
      tasks.push_back([&, pp = &p, tt = &t, dst] { read_piece(*tt, *pp, dst, key); });
    }
    run_tasks(tasks, true);
    ::futimens(fd.get(), nullptr);  // recently used (mtime); best effort
    return info_of(r, now_ns());
  }
  throw Error(Errc::busy, "get " + shown(key) + ": the object kept changing while being read");
}

// ---------------------------------------------------------------------------------------------
// TierStore

TierStore::TierStore(TierStoreOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
TierStore::~TierStore() = default;
TierStore::TierStore(TierStore &&) noexcept = default;
TierStore &TierStore::operator=(TierStore &&) noexcept = default;

ObjectInfo TierStore::put(std::string_view key, const void *data, std::size_t size) {
  return impl_->put(key, {{data, size}}, impl_->opt.placement);
}

ObjectInfo TierStore::put(std::string_view key, const std::vector<ConstBytes> &segments) {
  return impl_->put(key, segments, impl_->opt.placement);
}

ObjectInfo TierStore::put(std::string_view key, const std::vector<ConstBytes> &segments,
                          PlacementPolicy placement) {
  return impl_->put(key, segments, placement);
}

std::vector<unsigned char> TierStore::get(std::string_view key) {
  std::vector<unsigned char> out;
  impl_->get_into(key, nullptr, 0, &out);
  return out;
}

ObjectInfo TierStore::get_into(std::string_view key, void *buffer, std::size_t capacity) {
  return impl_->get_into(key, buffer, capacity, nullptr);
}

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

std::uint64_t TierStore::demote(std::uint64_t bytes) {
  Impl &m = *impl_;
  Fd lfd = m.open_lock();
  FileLock lk(lfd.get(), FileLock::exclusive, m.lock_path);
  Impl::Scan s = m.scan(true);
  const std::uint64_t f = m.rooms(s)[0].free;
  if (f >= bytes) return 0;
  return m.demote_locked(s, bytes, "");
}

std::vector<VerifyProblem> TierStore::verify() {
  std::vector<VerifyProblem> out;
  auto names = tierfs::list_dir(impl_->objects_dir);
  std::sort(names.begin(), names.end());
  for (const std::string &name : names) {
    if (name.empty() || name[0] == '.') continue;
    const auto key = filename_to_key(name);
    if (!key) {
      out.push_back({name, join(impl_->objects_dir, name) + ": not the name of an object record"});
      continue;
    }
    try {
      get(*key);
    } catch (const Error &e) {
      if (e.code() != Errc::not_found) out.push_back({*key, e.what()});
    }
  }
  return out;
}

const TierStoreOptions &TierStore::options() const noexcept { return impl_->opt; }

std::vector<TierSpec> TierStore::tiers_fastest_first() const {
  std::vector<TierSpec> out;
  std::lock_guard<std::mutex> g(impl_->mu);
  for (const auto &t : impl_->tiers) {
    out.push_back(t.spec);
    out.back().bandwidth = static_cast<std::uint64_t>(t.bandwidth);
  }
  return out;
}

PmemGranularity TierStore::pmem_granularity() const noexcept {
  for (const auto &t : impl_->tiers)
    if (t.map) return t.map->granularity();
  return PmemGranularity::page;
}

}  // namespace autotune
