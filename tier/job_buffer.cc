#include "autotune/job_buffer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>

#include "autotune/error.hpp"
#include "autotune/units.hpp"
#include "tier/fs.hpp"

namespace autotune {

using tierfs::Fd;
using tierfs::FileLock;
using tierfs::join;

namespace {

// A tier's root holds every job's directory: it must be a real directory (not a link) of this
// process's user (root, as autotune-bb creates buffers), writable by nobody else.
void check_tier_root(const std::string &tier, const std::string &root) {
  struct stat st;
  if (::lstat(root.c_str(), &st) != 0) throw_io("tier '" + tier + "': " + root, errno);
  std::string why;
  if (!S_ISDIR(st.st_mode))
    why = "is not a directory (a symbolic link?)";
  else if (st.st_uid != ::geteuid())
    why = "is owned by uid " + std::to_string(st.st_uid) + ", not uid " + std::to_string(::geteuid());
  else if (st.st_mode & (S_IWGRP | S_IWOTH))
    why = "is writable by group or others";
  if (!why.empty())
    throw Error(Errc::permission, "tier '" + tier + "': its directory " + root + " " + why +
                                      "; no buffer is created there (remove it, or give it to uid " +
                                      std::to_string(::geteuid()) + " with mode 0755)");
}

std::string record_name(std::uint32_t job) { return "job." + std::to_string(job); }

std::string encode(const JobBuffer &b) {
  std::ostringstream o;
  o << "job " << b.job << "\nuid " << b.uid << "\ngid " << b.gid << "\nplacement "
    << placement_name(b.placement) << "\ncreated " << b.created_ns << "\n";
  for (const auto &s : b.shares) o << "share " << s.tier << " " << s.bytes << "\n";
  return o.str();
}

JobBuffer decode(const std::string &text, const std::string &what) {
  JobBuffer b;
  std::istringstream in(text);
  std::string line;
  bool have_job = false, have_uid = false, have_gid = false;
  auto bad = [&](const std::string &why) -> Error {
    return Error(Errc::corrupt, what + ": not a valid buffer record (" + why + ")");
  };
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string k;
    f >> k;
    if (k == "job") {
      f >> b.job;
      have_job = true;
    } else if (k == "uid") {
      f >> b.uid;
      have_uid = true;
    } else if (k == "gid") {
      f >> b.gid;
      have_gid = true;
    } else if (k == "placement") {
      std::string p;
      f >> p;
      try {
        b.placement = parse_placement("placement", p);
      } catch (const Error &) {
        throw bad("placement");
      }
    } else if (k == "created") {
      f >> b.created_ns;
    } else if (k == "share") {
      JobBufferShare s;
      f >> s.tier >> s.bytes;
      b.shares.push_back(s);
    } else if (!k.empty()) {
      throw bad("unknown line '" + k + "'");
    }
    if (f.fail()) throw bad("line '" + line + "'");
  }
  if (!have_job || !have_uid || !have_gid) throw bad("a field is missing");
  return b;
}

std::uint64_t round_down(std::uint64_t n, std::uint64_t a) { return n / a * a; }

}  // namespace

std::uint64_t JobBuffer::capacity() const {
  std::uint64_t n = 0;
  for (const auto &s : shares) n += s.bytes;
  return n;
}

std::uint64_t JobBuffer::share_of(const std::string &tier) const {
  for (const auto &s : shares)
    if (s.tier == tier) return s.bytes;
  return 0;
}

JobBuffers::JobBuffers(TierSiteConf conf) : conf_(std::move(conf)) {
  if (conf_.tier.tiers.empty())
    throw_invalid((conf_.path.empty() ? std::string("autotune.conf") : conf_.path) +
                  ": no Tier= line; burst buffers need at least one storage tier");
}

std::string JobBuffers::registry_dir() const { return join(conf_.core.state_dir, "bb"); }

std::string JobBuffers::directory(const JobBuffer &b, const std::string &tier) const {
  for (const auto &t : conf_.tier.tiers)
    if (t.name == tier) return join(t.path, record_name(b.job));
  throw_invalid("tier '" + tier + "' is not in " + conf_.path);
}

std::optional<JobBuffer> JobBuffers::find(std::uint32_t job) const {
  const std::string path = join(registry_dir(), record_name(job));
  Fd fd = tierfs::open_if_exists(path, O_RDONLY);
  if (!fd) return std::nullopt;
  return decode(tierfs::read_small_file(fd.get(), path), path);
}

std::vector<JobBuffer> JobBuffers::list() const {
  std::vector<JobBuffer> out;
  struct stat st;
  if (::stat(registry_dir().c_str(), &st) != 0) return out;
  for (const auto &name : tierfs::list_dir(registry_dir())) {
    if (name.rfind("job.", 0) != 0 || name.find(".tmp.") != std::string::npos) continue;
    const std::string path = join(registry_dir(), name);
    Fd fd = tierfs::open_if_exists(path, O_RDONLY);
    if (fd) out.push_back(decode(tierfs::read_small_file(fd.get(), path), path));
  }
  std::sort(out.begin(), out.end(),
            [](const JobBuffer &a, const JobBuffer &b) { return a.job < b.job; });
  return out;
}

std::vector<TierCommitment> JobBuffers::commitments() const {
  std::vector<TierCommitment> out;
  const auto all = list();
  for (const auto &t : conf_.tier.tiers) {
    TierCommitment c{t.name, t.capacity, 0};
    for (const auto &b : all) c.committed += b.share_of(t.name);
    out.push_back(c);
  }
  return out;
}

JobBuffer JobBuffers::create(const JobBufferRequest &req) {
  const auto &tiers = conf_.tier.tiers;
  if (req.job == 0) throw_invalid("--job: 0 is not a job id");
  if (req.capacity == 0) throw_invalid("--capacity: the buffer's capacity must be larger than 0");
  std::vector<std::optional<std::uint64_t>> asked(tiers.size());
  auto index_of = [&](const std::string &name) -> size_t {
    for (size_t i = 0; i < tiers.size(); ++i)
      if (tiers[i].name == name) return i;
    std::string names;
    for (const auto &t : tiers) names += (names.empty() ? "" : ", ") + t.name;
    throw_invalid("--tier: '" + name + "' is not a tier of " + conf_.path +
                  "; configured: " + names);
  };
  for (const auto &s : req.tiers) {
    const size_t i = index_of(s.tier);
    if (asked[i]) throw_invalid("--tier: tier '" + s.tier + "' is given twice");
    asked[i] = s.bytes;
  }
  if (req.pmem) {
    size_t i = tiers.size();
    for (size_t j = 0; j < tiers.size(); ++j)
      if (tiers[j].kind == TierKind::pmem) i = j;
    if (i == tiers.size()) throw_invalid("--pmem: " + conf_.path + " has no Kind=pmem tier");
    if (asked[i]) throw_invalid("--pmem: tier '" + tiers[i].name + "' is also given with --tier");
    asked[i] = *req.pmem;
  }
  std::uint64_t explicit_sum = 0, free_cap = 0;
  for (size_t i = 0; i < tiers.size(); ++i) {
    if (asked[i])
      explicit_sum += *asked[i];
    else
      free_cap += tiers[i].capacity;
  }
  if (explicit_sum > req.capacity)
    throw_invalid("--capacity: the tier shares (" + format_size(explicit_sum) +
                  ") are larger than the buffer's capacity " + format_size(req.capacity));
  // The rest in proportion to the other tiers' capacities.
  std::vector<std::uint64_t> share(tiers.size(), 0);
  std::uint64_t rest = req.capacity - explicit_sum;
  size_t last_free = tiers.size();
  for (size_t i = 0; i < tiers.size(); ++i)
    if (!asked[i]) last_free = i;
  if (rest > 0 && last_free == tiers.size())
    throw_invalid("--capacity: " + format_size(req.capacity) + " is more than the tier shares (" +
                  format_size(explicit_sum) + ") and no tier is left to hold the rest");
  std::uint64_t given = 0;
  for (size_t i = 0; i < tiers.size(); ++i) {
    if (asked[i]) {
      share[i] = *asked[i];
    } else if (i != last_free) {
      share[i] =
          static_cast<std::uint64_t>(static_cast<long double>(rest) * tiers[i].capacity / free_cap);
      if (tiers[i].kind == TierKind::pmem) share[i] = round_down(share[i], kTierPage);
      given += share[i];
    }
  }
  if (last_free != tiers.size()) share[last_free] = rest - given;
  for (size_t i = 0; i < tiers.size(); ++i) {
    if (share[i] == 0) continue;
    if (tiers[i].kind == TierKind::pmem && share[i] % kTierPage)
      throw_invalid("--pmem: " + format_size(share[i]) + " is not a multiple of 4K");
    if (share[i] < kTierMinCapacity)
      throw_invalid("tier '" + tiers[i].name + "': a share of " + format_size(share[i]) +
                    " is below the minimum 1M; give 0 or at least 1M");
  }

  const std::string reg = registry_dir();
  tierfs::make_dirs(reg, 0755);
  Fd lfd = tierfs::open_file(join(reg, "lock"), O_RDWR | O_CREAT, 0600);
  FileLock lk(lfd.get(), FileLock::exclusive, join(reg, "lock"));
  if (auto old = find(req.job)) {
    if (old->uid != req.uid)
      throw_invalid("job " + std::to_string(req.job) + " already has a buffer, owned by uid " +
                    std::to_string(old->uid));
    return *old;
  }
  const auto committed = commitments();
  for (size_t i = 0; i < tiers.size(); ++i) {
    const std::uint64_t left =
        tiers[i].capacity > committed[i].committed ? tiers[i].capacity - committed[i].committed : 0;
    if (share[i] > left)
      throw Error(Errc::no_space, "tier '" + tiers[i].name + "': " + format_size(share[i]) +
                                      " requested, " + format_size(left) + " of " +
                                      format_size(tiers[i].capacity) + " left");
  }
  JobBuffer b;
  b.job = req.job;
  b.uid = req.uid;
  b.gid = req.gid;
  b.placement = req.placement.value_or(conf_.tier.placement);
  b.created_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  for (size_t i = 0; i < tiers.size(); ++i)
    if (share[i]) b.shares.push_back({tiers[i].name, share[i]});
  // Directories first, the record last: a crash in between leaves directories that destroy()
  // removes anyway.  Each tier's root must be ours and writable by nobody else, or a user could
  // have made it (a pmem tier in /dev/shm is gone after a reboot) and planted the next job's
  // directory or pool in it; a job directory without a record is a leftover, removed and made
  // anew, so that nothing in it predates this buffer.
  for (const auto &s : b.shares) {
    const std::string &root = tiers[index_of(s.tier)].path;
    tierfs::make_dirs(root, 0755);
    check_tier_root(s.tier, root);
    const std::string dir = directory(b, s.tier);
    if (::mkdir(dir.c_str(), 0700) != 0) {
      if (errno != EEXIST) throw_io(dir + ": mkdir", errno);
      tierfs::remove_tree(dir);
      if (::mkdir(dir.c_str(), 0700) != 0) throw_io(dir + ": mkdir", errno);
    }
    Fd d = tierfs::open_file(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (::fchown(d.get(), req.uid, req.gid) != 0) throw_io(dir + ": chown", errno);
    if (::fchmod(d.get(), 0700) != 0) throw_io(dir + ": chmod", errno);
  }
  tierfs::write_file_atomic(join(reg, record_name(req.job)), encode(b), 0644);
  return b;
}

bool JobBuffers::destroy(std::uint32_t job) {
  const std::string reg = registry_dir();
  struct stat st;
  bool any = false;
  std::optional<Fd> lfd;
  std::optional<FileLock> lk;
  if (::stat(reg.c_str(), &st) == 0) {
    lfd.emplace(tierfs::open_file(join(reg, "lock"), O_RDWR | O_CREAT, 0600));
    lk.emplace(lfd->get(), FileLock::exclusive, join(reg, "lock"));
  }
  for (const auto &t : conf_.tier.tiers) {
    Fd root = tierfs::open_if_exists(t.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (!root) continue;
    any |= tierfs::remove_tree_at(root.get(), record_name(job), join(t.path, record_name(job)));
  }
  const std::string rec = join(reg, record_name(job));
  if (::unlink(rec.c_str()) == 0) {
    any = true;
    tierfs::fsync_dir(reg);
  } else if (errno != ENOENT) {
    throw_io(rec + ": unlink", errno);
  }
  return any;
}

TierStoreOptions JobBuffers::store_options(const JobBuffer &b) const {
  TierStoreOptions o;
  o.placement = b.placement;
  o.demotion = conf_.tier.demotion;
  for (const auto &t : conf_.tier.tiers) {
    const std::uint64_t n = b.share_of(t.name);
    if (!n) continue;
    TierSpec s = t;
    s.path = directory(b, t.name);
    s.capacity = n;
    o.tiers.push_back(s);
  }
  return o;
}

std::uint32_t current_job_id() {
  for (const char *var : {"AUTOTUNE_BB_JOB", "SLURM_JOB_ID"}) {
    const char *v = std::getenv(var);
    if (v && *v) return static_cast<std::uint32_t>(parse_int(var, v, 1, 0xfffffffeLL));
  }
  return 0;
}

TierStore open_job_buffer(std::uint32_t job, const std::string &conf_path) {
  if (job == 0) job = current_job_id();
  if (job == 0)
    throw_invalid("no job id: pass one, or set AUTOTUNE_BB_JOB or SLURM_JOB_ID (inside a job)");
  JobBuffers jb(TierSiteConf::load(conf_path.empty() ? default_conf_path() : conf_path));
  auto b = jb.find(job);
  if (!b) throw Error(Errc::not_found, "job " + std::to_string(job) + " has no burst buffer");
  if (::geteuid() != b->uid)
    throw Error(Errc::permission, "the burst buffer of job " + std::to_string(job) +
                                      " belongs to uid " + std::to_string(b->uid) +
                                      "; open it as that user (this process is uid " +
                                      std::to_string(::geteuid()) + ")");
  return TierStore(jb.store_options(*b));
}

}  // namespace autotune
