// ssp::Checkpointer, consistent snapshots of a Context and restore (see checkpoint.hpp): owns the
// checkpoint in progress, rank 0's bookkeeping of it and a restored job's shape.  Thread safety:
// none; the Context's thread only.
#include "checkpoint.hpp"

#include <cinttypes>
#include <cstdio>
#include <iterator>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "autotune/log.hpp"
#include "protocol.hpp"
#include "ssp/error.hpp"

namespace ssp {

namespace {

// Runs `f` on every rank; if it threw anywhere, every rank throws the lowest failing rank's error.
template <class F>
void all_or_none(MPI_Comm comm, int rank, F &&f) {
  std::string msg;
  int code = 0;
  try {
    f();
  } catch (const Error &e) {
    msg = e.what();
    code = static_cast<int>(e.code());
  } catch (const std::exception &e) {
    msg = e.what();
    code = static_cast<int>(Errc::internal);
  }
  int me = msg.empty() ? std::numeric_limits<int>::max() : rank, first = 0;
  MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == std::numeric_limits<int>::max()) return;
  int len = static_cast<int>(msg.size());
  MPI_Bcast(&len, 1, MPI_INT, first, comm);
  MPI_Bcast(&code, 1, MPI_INT, first, comm);
  msg.resize(static_cast<std::size_t>(len));
  MPI_Bcast(msg.data(), len, MPI_CHAR, first, comm);
  throw Error(static_cast<Errc>(code), msg);
}

}  // namespace

std::string snapshot_id(std::int64_t clock) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "c%012" PRId64, clock);
  return buf;
}

Checkpointer::Checkpointer(Transport &tx, MPI_Comm comm, const Tables &tables, Server &server,
                           Coordinator &coord, const ConsistencyPolicy &policy, int rank,
                           int servers, int workers)
    : tx_(tx),
      comm_(comm),
      tables_(tables),
      server_(server),
      coord_(coord),
      policy_(policy),
      rank_(rank),
      servers_(servers),
      workers_(workers) {}

// Writes this server's shards; returns their sums for the manifest.
std::vector<PartSum> Checkpointer::write_shards(const std::string &id) {
  std::vector<PartSum> sums;
  for (std::size_t k = 0; k < tables_.size(); ++k) {
    const TableShape &t = tables_[k];
    for (const auto &[l, data] : server_.shards(static_cast<int>(k))) {
      Writer w;  // the part framed in place: the shard is copied once
      w.buffer().reserve(64 + t.name.size() + data.size());
      begin_part(w, PartKind::shard);
      w.put_string(t.name);
      w.put<std::uint8_t>(static_cast<std::uint8_t>(t.kind));
      w.put<std::int64_t>(t.rows);
      w.put<std::int64_t>(t.cols);
      w.put<std::int32_t>(t.map.shards());
      w.put<std::int32_t>(l);
      w.put<std::int64_t>(t.map.shard_begin(l));
      w.put<std::int64_t>(t.map.shard_end(l) - t.map.shard_begin(l));
      w.put_bytes(data.data(), data.size());
      std::string name = id + ".table-" + t.name + ".shard-" + std::to_string(l);
      const std::string framed = finish_part(w);
      store_->put(name, framed);
      sums.push_back(part_sum(std::move(name), framed));
    }
  }
  return sums;
}

// Rank 0: puts one part it writes itself and records its sum.
void Checkpointer::put_part(std::vector<PartSum> &sums, std::string name, PartKind kind,
                            const std::string &payload) {
  const std::string framed = frame_part(kind, payload);
  store_->put(name, framed);
  sums.push_back(part_sum(std::move(name), framed));
}

// Rank 0, once every server wrote its shards (`sums`): the scheduler and executors (when `sched`
// is not null), then the manifest listing every part, then `latest`.
void Checkpointer::write_manifest(const std::string &id, std::int64_t ckpt_clock,
                                  const Scheduler *sched, std::vector<PartSum> sums) {
  nlohmann::json j;
  j["format"] = kManifestFormat;
  j["id"] = id;
  j["clock"] = ckpt_clock;
  j["workers"] = workers_;
  j["servers"] = servers_;
  j["consistency"] = policy_.name();
  nlohmann::json tv = nlohmann::json::array();
  for (const auto &t : tables_)
    tv.push_back({{"name", t.name},
                  {"type", kind_name(t.kind)},
                  {"rows", t.rows},
                  {"cols", t.cols},
                  {"logical_servers", t.map.shards()}});
  j["tables"] = tv;
  if (sched) {
    const auto &sp = sched->spec();
    j["job"] = {{"executors", sp.executors},
                {"units", sp.units},
                {"epochs", sp.epochs},
                {"units_left", sched->units_left()}};
    put_part(sums, id + ".scheduler", PartKind::scheduler, sched->encode_scheduler());
    for (int e = 0; e < sched->executors(); ++e) {
      const std::string pre = id + ".executor-" + std::to_string(e);
      put_part(sums, pre + ".queue", PartKind::executor_queue, sched->encode_queue(e));
      put_part(sums, pre + ".state", PartKind::executor_state, sched->encode_state(e));
    }
  } else {
    j["job"] = nullptr;
  }
  j["parts"] = sums_to_json(std::move(sums));
  store_->put(id + ".manifest", j.dump(1));
  store_->put("latest", id + "\n");
  ++checkpoints_;
  autotune::log(autotune::LogLevel::info, "ssp: checkpoint " + id + " written (" +
                                              std::to_string(workers_) + " workers, " +
                                              std::to_string(servers_) + " servers)");
}

// Rank 0: once every server wrote its shards, finish the checkpoint and release the workers.
void Checkpointer::maybe_finish(std::int64_t seq) {
  if (rank_ != 0 || !own_shards_done_.count(seq) || shards_done_[seq] < servers_ - 1) return;
  const std::uint8_t kind = ckpt_kind_[seq];
  const std::int64_t c = server_.vc().max();
  const std::string id = snapshot_id(c);
  write_manifest(id, c, coord_.job_to_snapshot(kind == kCkptRun), std::move(ckpt_sums_[seq]));
  server_.ack_workers(kind, seq);
  own_shards_done_.erase(seq);
  shards_done_.erase(seq);
  ckpt_sums_.erase(seq);
  ckpt_kind_.erase(seq);
  if (kind == kCkptEnd) server_.complete_phase(seq);
  if (kind == kCkptRun) {
    store_ = nullptr;
    coord_.checkpoint_written(c);
  }
}

void Checkpointer::on_barrier(std::uint8_t kind, std::int64_t seq) {
  if (kind == kCkptRun) store_ = run_store_;
  if (!store_) throw Error(Errc::internal, "ssp: checkpoint barrier without a store");
  std::vector<PartSum> sums = write_shards(snapshot_id(server_.vc().max()));
  if (rank_ == 0) {
    auto &all = ckpt_sums_[seq];
    all.insert(all.end(), sums.begin(), sums.end());
    own_shards_done_.insert(seq);
    ckpt_kind_[seq] = kind;
    maybe_finish(seq);
  } else {
    Writer w;
    w.put<std::uint8_t>(kShardsDone);
    w.put<std::int64_t>(seq);
    put_sums(w, sums);
    tx_.send(0, kTagRequest, w.take());
    if (kind == kCkptEnd) server_.complete_phase(seq);
    if (kind == kCkptRun) store_ = nullptr;
  }
}

void Checkpointer::on_shards_done(Reader &r) {
  const auto seq = r.get<std::int64_t>();
  auto sums = get_sums(r);
  auto &all = ckpt_sums_[seq];
  all.insert(all.end(), std::make_move_iterator(sums.begin()), std::make_move_iterator(sums.end()));
  ++shards_done_[seq];
  maybe_finish(seq);
}

SnapshotInfo Checkpointer::restore(const SnapshotStore &store,
                                   const std::function<void(int, int)> &remap) {
  SnapshotInfo info;
  all_or_none(comm_, rank_, [&] {
    // Trusted only through the manifest: every part it lists must be there before any is loaded,
    // and each is checked against it as it is loaded.
    const SnapshotReader snap(store);
    snap.check_present();
    const std::string &id = snap.id();
    const nlohmann::json &man = snap.manifest();
    info.id = id;
    const std::string mname = snap.manifest_name();
    info.clock = manifest_int<std::int64_t>(man, "clock", mname);
    info.workers = manifest_int<int>(man, "workers", mname);
    info.servers = manifest_int<int>(man, "servers", mname);
    info.has_job = !man.at("job").is_null();
    if (info.has_job) {
      const auto &j = man.at("job");
      info.job_executors = manifest_int<int>(j, "executors", mname);
      info.job_units = manifest_int<std::uint64_t>(j, "units", mname);
      info.job_epochs = manifest_int<int>(j, "epochs", mname);
    }
    const auto &tv = man.at("tables");
    if (tv.size() != tables_.size())
      throw Error(Errc::invalid_argument,
                  "ssp: restore: the snapshot holds " + std::to_string(tv.size()) +
                      " tables, this program created " + std::to_string(tables_.size()));
    for (std::size_t k = 0; k < tv.size(); ++k) {
      const auto &t = tables_[k];
      const std::string n = tv[k].at("name").get<std::string>();
      const std::string ty = tv[k].at("type").get<std::string>();
      const auto rows = manifest_int<std::int64_t>(tv[k], "rows", mname);
      const auto cols = manifest_int<std::int64_t>(tv[k], "cols", mname);
      if (n != t.name || ty != kind_name(t.kind) || rows != t.rows || cols != t.cols)
        throw Error(Errc::invalid_argument,
                    "ssp: restore: table " + std::to_string(k) + " is '" + n + "' " +
                        std::to_string(rows) + " x " + std::to_string(cols) + " " + ty +
                        " in the snapshot, but '" + t.name + "' " + std::to_string(t.rows) + " x " +
                        std::to_string(t.cols) + " " + kind_name(t.kind) + " here");
    }
    // Remap the logical shards onto this run's servers and load the ones this rank owns.
    for (std::size_t k = 0; k < tv.size(); ++k) {
      const auto &t = tables_[k];
      const int L = manifest_int<int>(tv[k], "logical_servers", mname);
      if (L < servers_)
        throw Error(Errc::invalid_argument,
                    "ssp: restore: table '" + t.name + "' has " + std::to_string(L) +
                        " logical servers, fewer than the " + std::to_string(servers_) +
                        " server ranks of this run");
      remap(static_cast<int>(k), L);
      for (auto &[l, data] : server_.shards(static_cast<int>(k))) {
        const std::string name = id + ".table-" + t.name + ".shard-" + std::to_string(l);
        const std::string p = snap.part(name, PartKind::shard);
        Reader r(p, "snapshot part '" + name + "'");
        const std::string tn = r.get_string();
        r.get<std::uint8_t>();
        r.get<std::int64_t>();
        r.get<std::int64_t>();
        const auto Ls = r.get<std::int32_t>();
        const auto ls = r.get<std::int32_t>();
        const auto first = r.get<std::int64_t>();
        const auto count = r.get<std::int64_t>();
        if (tn != t.name || Ls != L || ls != l || first != t.map.shard_begin(l) ||
            count != t.map.shard_end(l) - first || r.left() != data.size())
          throw Error(Errc::corrupt, "snapshot part '" + name + "' does not match its manifest");
        r.get_bytes(data.data(), data.size());
      }
    }
    if (rank_ == 0 && info.has_job) {
      SchedulerSpec sp;
      sp.executors = info.job_executors;
      sp.units = info.job_units;
      sp.epochs = info.job_epochs;
      sp.tasks_per_clock = workers_;
      std::vector<std::string> queues, states;
      for (int e = 0; e < sp.executors; ++e) {
        const std::string pre = id + ".executor-" + std::to_string(e);
        queues.push_back(snap.part(pre + ".queue", PartKind::executor_queue));
        states.push_back(snap.part(pre + ".state", PartKind::executor_state));
      }
      coord_.restore_job(std::make_unique<Scheduler>(Scheduler::decode(
          workers_, sp, snap.part(id + ".scheduler", PartKind::scheduler), queues, states)));
    } else if (rank_ == 0) {
      coord_.restore_job(nullptr);
    }
  });
  if (info.has_job) {
    restored_job_ = true;
    r_executors_ = info.job_executors;
    r_units_ = info.job_units;
    r_epochs_ = info.job_epochs;
  }
  return info;
}

void Checkpointer::check_resumed_job(const SchedulerSpec &spec) {
  if (restored_job_ &&
      (r_executors_ != spec.executors || r_units_ != spec.units || r_epochs_ != spec.epochs))
    invalid("job: the restored snapshot's job has executors=" + std::to_string(r_executors_) +
            " units=" + std::to_string(r_units_) + " epochs=" + std::to_string(r_epochs_) +
            ", this job has executors=" + std::to_string(spec.executors) +
            " units=" + std::to_string(spec.units) + " epochs=" + std::to_string(spec.epochs) +
            " (a resumed job must keep them)");
  restored_job_ = false;
}

}  // namespace ssp
