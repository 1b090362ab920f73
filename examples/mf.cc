// mf: matrix factorization by SGD with libssp.
//
// Data: a generated users x items rating matrix of low rank with Gaussian noise (Debian 12
// packages no rating data set that a C++ program can read directly), the same on every rank from
// --seed: true factors U (users x true-rank) and V (items x true-rank) with N(0, 1/sqrt(r))
// entries, --ratings-per-user random items per user, rating = U_u . V_i + N(0, noise^2); one
// rating in ten is held out for testing.  The best possible test RMSE is about --noise.
//
// Model: the item factors (items x rank floats) are a libssp table on the parameter servers.  The
// users are the work units: each logical executor owns a contiguous range of users and keeps
// their factors as its executor state (shipped with its micro-tasks and saved in checkpoints).
// Each micro-task runs SGD over its users' ratings, --batch ratings per step (in user order; the
// step adds lr times the summed gradient of 1/2 (error^2 + lambda (|u|^2 + |v|^2)) over the
// batch, so --batch 1 is plain per-rating SGD), and adds its users' held-out squared errors to a
// "stats" table (one row per epoch, with the squared errors of its training steps, taken as the
// steps computed them), from which rank 0 prints the training and test RMSE of every epoch and
// when the epoch's last micro-task ended.
//
//   mpirun -np 4 build/examples/mf --epochs 10 --staleness 2
//   # tables of tens of MB (item factors 200000 x 32 floats: 25.6 MB):
//   mpirun -np 3 build/examples/mf --users 20000 --items 200000 --rank 32 --batch 256
//   # the same ratings for another program (bench/ssp_vs_ddp_torch.py): write them and exit
//   build/examples/mf --users 20000 --items 200000 --save-data /tmp/ratings.bin
//
// Checkpoints (examples/checkpoint.hpp) hold the item factors, the statistics and every
// executor's user factors; a run resumes from the newest one on any number of ranks:
//   T=pmem:/dev/shm/me/ckpt:256M,disk:/var/tmp/me/ckpt:1G
//   mpirun -np 4 build/examples/mf --checkpoint-tiers $T --checkpoint-every 20 --stop-at-clock 40
//   mpirun -np 3 build/examples/mf --checkpoint-tiers $T --restore
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "autotune/log.hpp"
#include "checkpoint.hpp"
#include "common.hpp"
#include "ssp/ssp.hpp"

using examples::now_s;

namespace {

struct Ratings {
  int users = 0, items = 0;
  std::vector<std::uint32_t> off;  // users + 1 offsets into item/value (training ratings)
  std::vector<std::uint32_t> item;
  std::vector<float> value;
  std::vector<std::uint32_t> toff;  // held-out ratings
  std::vector<std::uint32_t> titem;
  std::vector<float> tvalue;
};

Ratings generate(int users, int items, int true_rank, int per_user, double noise,
                 std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> f(
      0.0f, static_cast<float>(1.0 / std::sqrt(std::sqrt(static_cast<double>(true_rank)))));
  std::normal_distribution<float> eps(0.0f, static_cast<float>(noise));
  std::uniform_int_distribution<int> pick(0, items - 1);
  std::uniform_real_distribution<double> coin(0, 1);
  std::vector<float> U(static_cast<std::size_t>(users) * true_rank),
      V(static_cast<std::size_t>(items) * true_rank);
  for (auto &x : U) x = f(rng);
  for (auto &x : V) x = f(rng);
  Ratings d;
  d.users = users;
  d.items = items;
  d.off.push_back(0);
  d.toff.push_back(0);
  for (int u = 0; u < users; ++u) {
    for (int j = 0; j < per_user; ++j) {
      const int i = pick(rng);
      float r = eps(rng);
      for (int k = 0; k < true_rank; ++k)
        r += U[static_cast<std::size_t>(u) * true_rank + k] *
             V[static_cast<std::size_t>(i) * true_rank + k];
      if (coin(rng) < 0.1) {
        d.titem.push_back(static_cast<std::uint32_t>(i));
        d.tvalue.push_back(r);
      } else {
        d.item.push_back(static_cast<std::uint32_t>(i));
        d.value.push_back(r);
      }
    }
    d.off.push_back(static_cast<std::uint32_t>(d.item.size()));
    d.toff.push_back(static_cast<std::uint32_t>(d.titem.size()));
  }
  return d;
}

// --save-data: "MFR1", i32 users, i32 items, u64 train and test counts, then the arrays off,
// item, value, toff, titem, tvalue (host byte order).
bool save(const Ratings &d, const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const std::int32_t ui[2] = {d.users, d.items};
  const std::uint64_t n[2] = {d.item.size(), d.titem.size()};
  bool ok = std::fwrite("MFR1", 1, 4, f) == 4 && std::fwrite(ui, sizeof ui, 1, f) == 1 &&
            std::fwrite(n, sizeof n, 1, f) == 1;
  auto put = [&](const auto &v) {
    ok = ok && std::fwrite(v.data(), sizeof v[0], v.size(), f) == v.size();
  };
  put(d.off), put(d.item), put(d.value), put(d.toff), put(d.titem), put(d.tvalue);
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char **argv) {
  examples::Flags f(
      "mf",
      "mf [options]\n\nMatrix factorization by SGD on a libssp parameter server, on a "
      "generated low-rank rating\nmatrix with noise.  Run it under mpirun or srun "
      "--mpi=pmix with at least 2 ranks.");
  f.add("users", "N", "4000", "users (rows of the rating matrix)");
  f.add("items", "N", "1000", "items (columns)");
  f.add("true-rank", "N", "8", "rank of the generated matrix");
  f.add("ratings-per-user", "N", "50", "ratings generated per user (10% held out)");
  f.add("noise", "X", "0.1", "standard deviation of the rating noise");
  f.add("rank", "N", "8", "rank of the factorization");
  f.add("epochs", "N", "10", "passes over the users");
  f.add("lr", "X", "0.05", "learning rate");
  f.add("lambda", "X", "0.01", "L2 regularization");
  f.add("batch", "N", "1", "ratings per SGD step");
  f.add("target-rmse", "X", "0",
        "report when an epoch's training RMSE (the loss) is at or below X (0: none)");
  f.add("save-data", "FILE", "", "write the generated ratings to FILE and exit (any rank count)");
  examples::add_ssp_flags(f, {"item-factor shards", "4 per worker", "10", "users", "users"});
  f.add("seed", "N", "7", "seed of the generated data");
  examples::add_checkpoint_flags(f);
  f.parse(argc, argv);
  const int users = static_cast<int>(f.integer("users", 1, 10000000));
  const int items = static_cast<int>(f.integer("items", 1, 10000000));
  const int true_rank = static_cast<int>(f.integer("true-rank", 1, 1000));
  const int per_user = static_cast<int>(f.integer("ratings-per-user", 1, 100000));
  const double noise = f.real("noise", 0, 100);
  const int rank_k = static_cast<int>(f.integer("rank", 1, 1000));
  const int epochs = static_cast<int>(f.integer("epochs", 1, 10000));
  const float lr = static_cast<float>(f.real("lr", 1e-6, 10));
  const float lambda = static_cast<float>(f.real("lambda", 0, 10));
  const int batch = static_cast<int>(f.integer("batch", 1, 1000000));
  const double target = f.real("target-rmse", 0, 1e6);
  const examples::SspFlags sf = examples::ssp_flags(f);
  const int staleness = sf.staleness, servers = sf.servers, logical = sf.logical,
            executors = sf.executors, tpc = sf.tasks_per_clock, straggler = sf.straggler;
  const double task_ms = sf.task_ms, sfactor = sf.straggler_factor, sdelay = sf.straggler_delay_s;
  const auto seed = static_cast<std::uint64_t>(f.integer("seed", 0, 1LL << 62));
  const examples::CheckpointFlags ck = examples::checkpoint_flags(f);

  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto die = [&](const std::string &msg) {
    if (rank == 0) std::fprintf(stderr, "mf: %s\n", msg.c_str());
    MPI_Finalize();
    std::exit(2);
  };
  if (rank == 0) autotune::set_stderr_log_sink("mf", autotune::LogLevel::info);
  const Ratings d = generate(users, items, true_rank, per_user, noise, seed);
  if (f.given("save-data")) {
    if (rank == 0 && !save(d, f.str("save-data")))
      die("--save-data: cannot write '" + f.str("save-data") + "': " + std::strerror(errno));
    if (rank == 0)
      std::printf("mf: wrote %zu train / %zu test ratings to %s\n", d.item.size(), d.titem.size(),
                  f.str("save-data").c_str());
    MPI_Finalize();
    return 0;
  }
  try {
    ssp::Options o;
    o.staleness = staleness;
    o.servers = servers;
    o.logical_servers = logical;
    o.fresh_reads = sf.fresh_reads;
    o.app = "mf";
    ssp::Context ctx(MPI_COMM_WORLD, o);
    if (straggler >= 0 && (straggler < ctx.servers() || straggler >= size))
      die("--straggler-rank: '" + std::to_string(straggler) + "' is not a worker rank; allowed: " +
          std::to_string(ctx.servers()) + " to " + std::to_string(size - 1) + " or -1");
    auto V = ctx.table<float>("items", items, rank_k);
    // per epoch: test squared error, test count, training squared error, training count
    auto stats = ctx.table<double>("stats", epochs, 4);
    if (rank == 0)
      std::printf(
          "mf: %d ranks (%d workers, %d server%s), %s; %d users x %d items, %zu train / %zu test "
          "ratings (generated: true rank %d, noise %g); rank %d, %d epochs, batch %d, lr %g\n",
          size, ctx.workers(), ctx.servers(), ctx.servers() == 1 ? "" : "s",
          ctx.policy().name().c_str(), users, items, d.item.size(), d.titem.size(), true_rank,
          noise, rank_k, epochs, batch, static_cast<double>(lr));
    std::fflush(stdout);
    const auto store = examples::open_checkpoint_store(ck, MPI_COMM_WORLD);
    if (rank == 0 && store)
      std::printf("mf: checkpoints: %s\n", examples::describe_store(ck, store.get()).c_str());
    int job_executors = executors ? std::min(executors, users) : std::min(4 * ctx.workers(), users);
    if (ck.restore) {
      auto info = ctx.restore(*store);
      if (info.has_job && !executors) job_executors = info.job_executors;  // keep the job's shape
      const auto restored = V.pull_all();
      if (rank == 0)
        std::printf("mf: restored %s (clock %lld, taken with %d workers, %d servers) model=%s\n",
                    info.id.c_str(), static_cast<long long>(info.clock), info.workers, info.servers,
                    examples::digest(restored.data(), restored.size() * sizeof(float)).c_str());
    }
    std::fflush(stdout);
    examples::Straggler slow(rank == straggler, sfactor, sdelay);
    ssp::Job job;
    job.executors = job_executors;
    job.units = static_cast<std::uint64_t>(users);
    job.epochs = epochs;
    job.task_ms = task_ms;
    job.max_task_units = sf.task_max;
    job.tasks_per_clock = tpc;
    job.initial_task_units = 8;
    job.checkpoint_store = ck.every > 0 ? store.get() : nullptr;
    job.checkpoint_every = ck.every;
    job.stop_at_clock = ck.stop_at;
    const std::size_t K = static_cast<std::size_t>(rank_k);
    // One step's rows: item factors as read (training and held-out ratings), and the gradients
    // of the users and items.
    std::vector<float> vb(K), dvb(K), du, tv;
    // When each epoch's last micro-task on this worker ended (seconds since the start).
    std::vector<double> epoch_end(static_cast<std::size_t>(epochs), 0.0);
    const double t0 = now_s();
    auto res = ctx.run(job, [&](ssp::Task &t) {
      const std::size_t n = t.shard_end - t.shard_begin;
      const std::size_t need = n * K * sizeof(float);
      if (t.state.size() != need) {  // first visit: small random user factors
        std::mt19937_64 g(seed * 1000003 + t.shard_begin);
        std::normal_distribution<float> init(0.0f, 0.1f);
        std::vector<float> u0(n * K);
        for (auto &x : u0) x = init(g);
        t.state.assign(reinterpret_cast<const char *>(u0.data()), need);
      }
      auto *Ub = reinterpret_cast<float *>(&t.state[0]);
      auto user_row = [&](std::uint64_t u) { return Ub + (u - t.shard_begin) * K; };
      double se = 0, cnt = 0, train_se = 0, train_n = 0;
      // The straggler's delay is taken once per micro-task, from the task's compute time: a
      // clock read per step would cost more than the step itself at --batch 1.
      const double a = now_s();
      auto task_done = [&] {
        slow.after_batch(now_s() - a);
        const double row[4] = {se, cnt, train_se, train_n};
        stats.inc_row(t.epoch, row);
        auto &end = epoch_end[static_cast<std::size_t>(t.epoch)];
        end = std::max(end, now_s() - t0);
      };
      if (batch == 1) {
        // Plain per-rating SGD, read and written one row at a time: the same steps as the
        // batched path below with one rating each, without its bookkeeping per step.
        float *vv = vb.data(), *dv = dvb.data();
        for (std::uint64_t u = t.begin; u < t.end; ++u) {
          float *uu = user_row(u);
          for (std::uint32_t j = d.off[u]; j < d.off[u + 1]; ++j) {
            V.get(d.item[j], vv);
            float p = 0;
            for (std::size_t k = 0; k < K; ++k) p += uu[k] * vv[k];
            const float e = d.value[j] - p;
            train_se += static_cast<double>(e) * e;
            train_n += 1;
            for (std::size_t k = 0; k < K; ++k) {
              const float uk = uu[k], vk = vv[k];
              uu[k] += lr * (e * vk - lambda * uk);
              dv[k] = lr * (e * uk - lambda * vk);
            }
            V.inc_row(d.item[j], dv);
          }
          for (std::uint32_t h = d.toff[u]; h < d.toff[u + 1]; ++h) {
            V.get(d.titem[h], vv);
            float p = 0;
            for (std::size_t k = 0; k < K; ++k) p += uu[k] * vv[k];
            se += (d.tvalue[h] - p) * (d.tvalue[h] - p);
            cnt += 1;
          }
        }
        task_done();
        return;
      }
      // The task's training ratings in user order, `batch` per step: every error is taken at
      // the step's start, then the users and items move by lr times their summed gradients.
      std::uint64_t u = t.begin;
      std::uint32_t j = u < t.end ? d.off[u] : 0;
      const std::size_t B = static_cast<std::size_t>(batch);
      std::vector<std::uint32_t> rated;
      std::vector<std::int64_t> rows;
      std::vector<std::uint64_t> owner;
      while (u < t.end) {
        const std::uint64_t u_first = u;
        // The step's ratings: up to `batch` of them, from at most `batch` users.
        rated.clear();
        owner.clear();
        while (u < t.end && rated.size() < B && u - u_first < B) {
          if (j == d.off[u + 1]) {  // the user's training ratings are done
            ++u;
            if (u < t.end) j = d.off[u];
            continue;
          }
          rated.push_back(j++);
          owner.push_back(u);
          ++train_n;
        }
        const std::size_t m = rated.size();
        // Their item rows, read together (one round trip for all the misses).
        rows.resize(m);
        for (std::size_t i = 0; i < m; ++i) rows[i] = d.item[rated[i]];
        vb.resize(m * K);
        dvb.resize(m * K);
        V.get_rows_at(rows.data(), static_cast<std::int64_t>(m), vb.data());
        du.assign(static_cast<std::size_t>(std::min<std::uint64_t>(u, t.end - 1) - u_first + 1) * K, 0.0f);
        for (std::size_t i = 0; i < m; ++i) {
          const float *vv = &vb[i * K];
          const float *uu = user_row(owner[i]);
          float p = 0;
          for (std::size_t k = 0; k < K; ++k) p += uu[k] * vv[k];
          const float e = d.value[rated[i]] - p;
          train_se += static_cast<double>(e) * e;
          float *g = &du[(owner[i] - u_first) * K];
          float *dv = &dvb[i * K];
          for (std::size_t k = 0; k < K; ++k) {
            g[k] += e * vv[k] - lambda * uu[k];
            dv[k] = lr * (e * uu[k] - lambda * vv[k]);
          }
        }
        for (std::uint64_t w = u_first; w < t.end && w - u_first < B && w <= u; ++w) {
          float *uu = user_row(w);
          const float *g = &du[(w - u_first) * K];
          for (std::size_t k = 0; k < K; ++k) uu[k] += lr * g[k];
        }
        for (std::size_t i = 0; i < m; ++i) V.inc_row(rows[i], &dvb[i * K]);
        // The held-out ratings of the users finished in this step.
        if (u > u_first) {
          rows.assign(d.titem.begin() + d.toff[u_first], d.titem.begin() + d.toff[u]);
          tv.resize(rows.size() * K);
          V.get_rows_at(rows.data(), static_cast<std::int64_t>(rows.size()), tv.data());
          for (std::uint64_t w = u_first; w < u; ++w) {
            const float *uu = user_row(w);
            for (std::uint32_t h = d.toff[w]; h < d.toff[w + 1]; ++h) {
              const float *vv = &tv[(h - d.toff[u_first]) * K];
              float p = 0;
              for (std::size_t k = 0; k < K; ++k) p += uu[k] * vv[k];
              se += (d.tvalue[h] - p) * (d.tvalue[h] - p);
              cnt += 1;
            }
          }
        }
      }
      task_done();
    });
    const double secs = now_s() - t0;
    std::vector<double> ends(epoch_end.size());
    MPI_Allreduce(epoch_end.data(), ends.data(), epochs, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    auto s = stats.pull_all();
    const auto model = V.pull_all();
    if (rank == 0) {
      double reached = -1, train_rmse = 0;
      auto rmse_of = [&](std::size_t e, int col) {
        const double n = s[4 * e + static_cast<std::size_t>(col) + 1];
        return n > 0 ? std::sqrt(s[4 * e + static_cast<std::size_t>(col)] / n) : 0.0;
      };
      for (int e = 0; e < epochs; ++e) {
        const auto i = static_cast<std::size_t>(e);
        train_rmse = rmse_of(i, 2);
        if (reached < 0 && target > 0 && train_rmse <= target) reached = ends[i];
        std::printf("epoch %d train_rmse=%.4f test_rmse=%.4f t=%.3f\n", e + 1, train_rmse,
                    rmse_of(i, 0), ends[i]);
      }
      std::string tasks;
      for (std::size_t i = 0; i < res.tasks_per_worker.size(); ++i)
        tasks += (i ? "," : "") + std::to_string(res.tasks_per_worker[i]);
      const double last = rmse_of(static_cast<std::size_t>(epochs - 1), 0);
      std::printf(
          "final: consistency=%s ranks=%d workers=%d servers=%d epochs=%d test_rmse=%.4f "
          "train_rmse=%.4f noise=%g train_s=%.3f ratings_per_s=%.0f target_rmse=%g time_to_target_s=%.3f "
          "tasks_per_worker=%s finished=%d checkpoints=%llu clock=%lld model=%s\n",
          ctx.policy().name().c_str(), size, ctx.workers(), ctx.servers(), epochs, last, train_rmse,
          noise,
          secs, static_cast<double>(d.item.size()) * epochs / secs, target, reached, tasks.c_str(),
          res.finished ? 1 : 0, static_cast<unsigned long long>(res.checkpoints),
          static_cast<long long>(res.clock),
          examples::digest(model.data(), model.size() * sizeof(float)).c_str());
      if (!res.finished)
        std::printf("mf: suspended at clock %lld; resume with --restore\n",
                    static_cast<long long>(res.clock));
      std::fflush(stdout);
    }
    ctx.finish();
  } catch (const ssp::Error &e) {
    die(e.what());
  }
  MPI_Finalize();
  return 0;
}
