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
// Each micro-task runs SGD over its users' ratings and adds its users' held-out squared errors to
// a "stats" table (one row per epoch), from which rank 0 prints the test RMSE of every epoch.
//
//   mpirun -np 4 build/examples/mf --epochs 10 --staleness 2
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
  examples::add_ssp_flags(f, {"item-factor shards", "4 per worker", "10", "users"});
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
  try {
    ssp::Options o;
    o.staleness = staleness;
    o.servers = servers;
    o.logical_servers = logical;
    o.app = "mf";
    ssp::Context ctx(MPI_COMM_WORLD, o);
    if (straggler >= 0 && (straggler < ctx.servers() || straggler >= size))
      die("--straggler-rank: '" + std::to_string(straggler) + "' is not a worker rank; allowed: " +
          std::to_string(ctx.servers()) + " to " + std::to_string(size - 1) + " or -1");
    auto V = ctx.table<float>("items", items, rank_k);
    auto stats = ctx.table<double>("stats", epochs, 2);  // per epoch: squared error, count
    if (rank == 0)
      std::printf(
          "mf: %d ranks (%d workers, %d server%s), %s; %d users x %d items, %zu train / %zu test "
          "ratings (generated: true rank %d, noise %g); rank %d, %d epochs\n",
          size, ctx.workers(), ctx.servers(), ctx.servers() == 1 ? "" : "s",
          ctx.policy().name().c_str(), users, items, d.item.size(), d.titem.size(), true_rank,
          noise, rank_k, epochs);
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
    job.tasks_per_clock = tpc;
    job.initial_task_units = 8;
    job.checkpoint_store = ck.every > 0 ? store.get() : nullptr;
    job.checkpoint_every = ck.every;
    job.stop_at_clock = ck.stop_at;
    std::vector<float> v(static_cast<std::size_t>(rank_k)), dv(static_cast<std::size_t>(rank_k));
    const double t0 = now_s();
    auto res = ctx.run(job, [&](ssp::Task &t) {
      const std::size_t n = t.shard_end - t.shard_begin;
      const std::size_t need = n * static_cast<std::size_t>(rank_k) * sizeof(float);
      if (t.state.size() != need) {  // first visit: small random user factors
        std::mt19937_64 g(seed * 1000003 + t.shard_begin);
        std::normal_distribution<float> init(0.0f, 0.1f);
        std::vector<float> u0(n * static_cast<std::size_t>(rank_k));
        for (auto &x : u0) x = init(g);
        t.state.assign(reinterpret_cast<const char *>(u0.data()), need);
      }
      auto *Ub = reinterpret_cast<float *>(&t.state[0]);
      double se = 0, cnt = 0;
      for (std::uint64_t u = t.begin; u < t.end; ++u) {
        const double a = now_s();
        float *uu = Ub + (u - t.shard_begin) * static_cast<std::size_t>(rank_k);
        for (std::uint32_t j = d.off[u]; j < d.off[u + 1]; ++j) {
          V.get(d.item[j], v.data());
          float p = 0;
          for (int k = 0; k < rank_k; ++k) p += uu[k] * v[static_cast<std::size_t>(k)];
          const float e = d.value[j] - p;
          for (int k = 0; k < rank_k; ++k) {
            const float uk = uu[k], vk = v[static_cast<std::size_t>(k)];
            uu[k] += lr * (e * vk - lambda * uk);
            dv[static_cast<std::size_t>(k)] = lr * (e * uk - lambda * vk);
          }
          V.inc_row(d.item[j], dv.data());
        }
        for (std::uint32_t j = d.toff[u]; j < d.toff[u + 1]; ++j) {
          V.get(d.titem[j], v.data());
          float p = 0;
          for (int k = 0; k < rank_k; ++k) p += uu[k] * v[static_cast<std::size_t>(k)];
          se += (d.tvalue[j] - p) * (d.tvalue[j] - p);
          cnt += 1;
        }
        slow.after_batch(now_s() - a);
      }
      stats.inc(t.epoch, 0, se);
      stats.inc(t.epoch, 1, cnt);
    });
    const double secs = now_s() - t0;
    auto s = stats.pull_all();
    const auto model = V.pull_all();
    if (rank == 0) {
      for (int e = 0; e < epochs; ++e)
        std::printf("epoch %d test_rmse=%.4f\n", e + 1,
                    s[static_cast<std::size_t>(2 * e + 1)] > 0
                        ? std::sqrt(s[static_cast<std::size_t>(2 * e)] /
                                    s[static_cast<std::size_t>(2 * e + 1)])
                        : 0.0);
      std::string tasks;
      for (std::size_t i = 0; i < res.tasks_per_worker.size(); ++i)
        tasks += (i ? "," : "") + std::to_string(res.tasks_per_worker[i]);
      const double last = s[static_cast<std::size_t>(2 * epochs - 1)] > 0
                              ? std::sqrt(s[static_cast<std::size_t>(2 * epochs - 2)] /
                                          s[static_cast<std::size_t>(2 * epochs - 1)])
                              : 0.0;
      std::printf(
          "final: consistency=%s ranks=%d workers=%d servers=%d epochs=%d test_rmse=%.4f "
          "noise=%g train_s=%.3f ratings_per_s=%.0f tasks_per_worker=%s finished=%d "
          "checkpoints=%llu clock=%lld model=%s\n",
          ctx.policy().name().c_str(), size, ctx.workers(), ctx.servers(), epochs, last, noise,
          secs, static_cast<double>(d.item.size()) * epochs / secs, tasks.c_str(),
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
