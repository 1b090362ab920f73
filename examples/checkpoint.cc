#include "checkpoint.hpp"

#include <zlib.h>

#include <cstdio>
#include <limits>

#include "autotune/tier_conf.hpp"
#include "autotune/error.hpp"
#include "autotune/units.hpp"
#include "ssp/error.hpp"
#include "ssp/tier_store.hpp"

namespace examples {
namespace {

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// --checkpoint-tiers KIND:PATH:SIZE[:BANDWIDTH],... as autotune.conf Tier= lines; the tiers are
// named after their kind (a second disk tier is disk2, ...).
std::string tiers_to_conf(const Flags &f, const std::string &spec) {
  const std::string allowed =
      "allowed: KIND:PATH:SIZE[:BANDWIDTH] separated by commas, KIND pmem or disk, e.g. "
      "pmem:/dev/shm/me/ckpt:1G,disk:/var/tmp/me/ckpt:8G";
  std::string text;
  int disks = 0;
  for (const auto &entry : split(spec, ',')) {
    const auto p = split(entry, ':');
    if (p.size() < 3 || p.size() > 4 || p[0].empty() || p[1].empty() || p[2].empty())
      f.fail("--checkpoint-tiers: '" + entry + "' is not a tier; " + allowed);
    if (p[0] != "pmem" && p[0] != "disk")
      f.fail("--checkpoint-tiers: '" + entry + "': kind '" + p[0] + "' is not allowed; " + allowed);
    for (const auto &x : p)
      if (x.find_first_of(" \t\"=#") != std::string::npos)
        f.fail("--checkpoint-tiers: '" + entry + "' contains a blank, '\"', '=' or '#'; " +
               allowed);
    std::string name = p[0];
    if (p[0] == "disk" && ++disks > 1) name += std::to_string(disks);
    text += "Tier=" + name + " Kind=" + p[0] + " Path=" + p[1] + " Capacity=" + p[2];
    if (p.size() == 4) text += " Bandwidth=" + p[3];
    text += "\n";
  }
  return text;
}

// The tiers of --checkpoint-tiers or --checkpoint-tier-conf.
autotune::TierSiteConf load_tiers(const CheckpointFlags &c) {
  if (c.where == CheckpointFlags::Where::tiers)
    return autotune::TierSiteConf::load_text(c.tier_text, c.tier_file);
  return autotune::TierSiteConf::load(c.tier_file);
}

std::unique_ptr<ssp::SnapshotStore> open_here(const CheckpointFlags &c) {
  ssp::TierSnapshotOptions o;
  o.prefix = c.prefix;
  o.keep = c.keep;
  switch (c.where) {
    case CheckpointFlags::Where::none:
      return nullptr;
    case CheckpointFlags::Where::dir:
      return std::make_unique<ssp::DirectorySnapshotStore>(c.dir);
    case CheckpointFlags::Where::bb:
      return ssp::TierSnapshotStore::open_job_buffer(o);
    case CheckpointFlags::Where::tiers:
    case CheckpointFlags::Where::tier_conf: {
      const autotune::TierSiteConf conf = load_tiers(c);
      return std::make_unique<ssp::TierSnapshotStore>(
          autotune::TierStore(autotune::TierStoreOptions::from_conf(conf.tier)), o);
    }
  }
  return nullptr;
}

// Runs `fn` on the ranks where `mine` is true; throws on every rank the lowest failing rank's
// error.
template <class F>
void collective(MPI_Comm comm, bool mine, F &&fn) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string msg;
  int code = 0;
  if (mine) {
    try {
      fn();
    } catch (const autotune::Error &e) {
      msg = e.what();
      code = static_cast<int>(e.code());
    } catch (const std::exception &e) {
      msg = e.what();
      code = static_cast<int>(autotune::Errc::internal);
    }
  }
  int me = msg.empty() ? std::numeric_limits<int>::max() : rank, first = 0;
  MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == std::numeric_limits<int>::max()) return;
  int len = static_cast<int>(msg.size());
  MPI_Bcast(&len, 1, MPI_INT, first, comm);
  MPI_Bcast(&code, 1, MPI_INT, first, comm);
  msg.resize(static_cast<std::size_t>(len));
  MPI_Bcast(msg.data(), len, MPI_CHAR, first, comm);
  throw ssp::Error(static_cast<ssp::Errc>(code), msg);
}

}  // namespace

void add_checkpoint_flags(Flags &f) {
  f.add("checkpoint-dir", "DIR", "",
        "checkpoint into this directory (every server rank must see it)");
  f.add("checkpoint-bb", "", "",
        "checkpoint into this Slurm job's burst buffer (#BB_LUA buffer ...; pmem + disk)");
  f.add("checkpoint-tiers", "SPEC", "",
        "checkpoint into a tier store on KIND:PATH:SIZE[:BANDWIDTH],... (KIND pmem|disk), "
        "e.g. pmem:/dev/shm/me/ckpt:1G,disk:/var/tmp/me/ckpt:8G");
  f.add("checkpoint-tier-conf", "FILE", "",
        "checkpoint into a tier store on the Tier= lines of FILE (autotune.conf syntax)");
  f.add("checkpoint-prefix", "KEY", "ssp", "key prefix of the checkpoint in a tier store");
  f.add("checkpoint-keep", "N", "2",
        "complete checkpoints kept in a tier store, the newest (0: all)");
  f.add("checkpoint-every", "N", "0", "clocks between checkpoints (0: none)");
  f.add("restore", "", "", "resume from the newest checkpoint (any number of ranks)");
  f.add("stop-at-clock", "N", "",
        "suspend training at clock N, after the checkpoint due then (a job out of time)");
}

CheckpointFlags checkpoint_flags(const Flags &f) {
  CheckpointFlags c;
  int n = 0;
  std::string names;
  for (const char *k :
       {"checkpoint-dir", "checkpoint-bb", "checkpoint-tiers", "checkpoint-tier-conf"})
    if (f.given(k)) {
      ++n;
      names += std::string(names.empty() ? "" : " and ") + "--" + k;
    }
  if (n > 1) f.fail(names + ": give only one place for checkpoints");
  if (f.given("checkpoint-dir")) {
    c.where = CheckpointFlags::Where::dir;
    c.dir = f.str("checkpoint-dir");
    if (c.dir.empty()) f.fail("--checkpoint-dir: empty; allowed: a directory");
  } else if (f.given("checkpoint-bb")) {
    c.where = CheckpointFlags::Where::bb;
  } else if (f.given("checkpoint-tiers")) {
    c.where = CheckpointFlags::Where::tiers;
    c.tier_file = "--checkpoint-tiers";
    c.tier_text = tiers_to_conf(f, f.str("checkpoint-tiers"));
  } else if (f.given("checkpoint-tier-conf")) {
    c.where = CheckpointFlags::Where::tier_conf;
    c.tier_file = f.str("checkpoint-tier-conf");
  }
  if (c.where == CheckpointFlags::Where::tiers || c.where == CheckpointFlags::Where::tier_conf) {
    try {
      const autotune::TierSiteConf conf = load_tiers(c);
      if (conf.tier.tiers.empty())
        f.fail("--checkpoint-tier-conf: '" + c.tier_file +
               "' has no Tier= line; allowed: a file with Tier=NAME Kind=pmem|disk Path=DIR "
               "Capacity=SIZE lines");
    } catch (const autotune::Error &e) {
      f.fail(c.where == CheckpointFlags::Where::tiers
                 ? std::string(e.what())
                 : "--checkpoint-tier-conf: " + std::string(e.what()));
    }
  }
  const bool tier = c.where == CheckpointFlags::Where::bb ||
                    c.where == CheckpointFlags::Where::tiers ||
                    c.where == CheckpointFlags::Where::tier_conf;
  for (const char *k : {"checkpoint-prefix", "checkpoint-keep"})
    if (f.given(k) && !tier)
      f.fail(std::string("--") + k +
             ": only with a tier store (--checkpoint-bb, --checkpoint-tiers or "
             "--checkpoint-tier-conf)");
  c.prefix = f.str("checkpoint-prefix");
  try {
    autotune::validate_tier_key(c.prefix, "--checkpoint-prefix");
  } catch (const autotune::Error &e) {
    f.fail(e.what());
  }
  c.keep = static_cast<int>(f.integer("checkpoint-keep", 0, 1000000));
  c.every = static_cast<int>(f.integer("checkpoint-every", 0, 1 << 30));
  c.restore = f.given("restore");
  if (f.given("stop-at-clock")) c.stop_at = f.integer("stop-at-clock", 1, 1LL << 40);
  if ((c.every > 0 || c.restore) && !c.any_store())
    f.fail(std::string(c.restore ? "--restore" : "--checkpoint-every") +
           ": needs a place for checkpoints: --checkpoint-dir, --checkpoint-bb, "
           "--checkpoint-tiers or --checkpoint-tier-conf");
  return c;
}

std::unique_ptr<ssp::SnapshotStore> open_checkpoint_store(const CheckpointFlags &c, MPI_Comm comm) {
  if (!c.any_store()) return nullptr;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::unique_ptr<ssp::SnapshotStore> s;
  collective(comm, rank == 0, [&] { s = open_here(c); });
  collective(comm, rank != 0, [&] { s = open_here(c); });
  return s;
}

std::string describe_store(const CheckpointFlags &c, const ssp::SnapshotStore *s) {
  if (!s) return "none";
  if (c.where == CheckpointFlags::Where::dir) return "directory " + c.dir;
  const auto *t = dynamic_cast<const ssp::TierSnapshotStore *>(s);
  if (!t) return "?";
  std::string out =
      std::string(c.where == CheckpointFlags::Where::bb ? "burst buffer" : "tier store") + " " +
      t->options().prefix + "/ on";
  bool first = true;
  for (const auto &u : t->tier_store().usage()) {
    out += std::string(first ? " " : " + ") + u.name + " " + autotune::format_size(u.capacity) +
           " (" + u.path + ")";
    first = false;
  }
  return out;
}

std::string digest(const void *data, std::size_t bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto *p = static_cast<const Bytef *>(data);
  while (bytes > 0) {
    const uInt n = static_cast<uInt>(std::min<std::size_t>(bytes, 1u << 30));
    crc = crc32(crc, p, n);
    p += n;
    bytes -= n;
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08lx", static_cast<unsigned long>(crc));
  return buf;
}

}  // namespace examples
