// logreg: multinomial logistic regression on Fashion-MNIST with libssp (the project's demo
// workload).  The model (785 x 10 floats: 784 pixel weights and a bias per class) lives on the
// parameter servers; the 60000 training images are the work units of a libssp job, split into
// logical executors and run as micro-tasks of mini-batch SGD steps.  The first worker evaluates
// the test accuracy as it goes; rank 0 prints the final accuracy on all 10000 test images.
//
//   mpirun -np 4 build/examples/logreg --epochs 3 --staleness 2
//   srun --mpi=pmix -n 4 build/examples/logreg --staleness 0        # BSP
//   mpirun -np 4 build/examples/logreg --straggler-rank 3 --straggler-factor 2
//
// Checkpoints (examples/checkpoint.hpp) go to a directory, the job's burst buffer or a tier store
// (pmem + disk), and a run resumes from the newest one on any number of ranks:
//   T=pmem:/dev/shm/me/ckpt:256M,disk:/var/tmp/me/ckpt:1G
//   mpirun -np 4 examples/logreg --checkpoint-tiers $T --checkpoint-every 25 --stop-at-clock 50
//   mpirun -np 2 examples/logreg --checkpoint-tiers $T --restore        # in build/
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "autotune/log.hpp"
#include "checkpoint.hpp"
#include "common.hpp"
#include "ssp/ssp.hpp"

using examples::now_s;

int main(int argc, char **argv) {
  examples::Flags f("logreg",
                    "logreg [options]\n\nMultinomial logistic regression on Fashion-MNIST on a "
                    "libssp parameter server.\nRun it under mpirun or srun --mpi=pmix with at "
                    "least 2 ranks (the first --servers ranks are\nparameter servers, the others "
                    "workers).  Prints the test accuracy as it trains and at the end.");
  f.add("data", "DIR|NAME", "fashion-mnist",
        "directory of the IDX .gz files, or a data set name under /usr/share/datasets");
  f.add("epochs", "N", "5", "passes over the training images");
  f.add("batch", "N", "32", "mini-batch size of an SGD step");
  f.add("lr", "X", "0.01", "learning rate");
  f.add("lr-decay", "X", "1", "the learning rate is multiplied by X after each epoch");
  examples::add_ssp_flags(f, {"model shards", "4 per worker, or the restored job's", "5", "batches"});
  f.add("eval-interval", "S", "0.5",
        "seconds of training between model snapshots evaluated after training (0: none)");
  f.add("eval-samples", "N", "10000", "test images used to evaluate the snapshots");
  f.add("target-acc", "A", "0.8",
        "report the training time at which this test accuracy is reached");
  f.add("seed", "N", "1", "seed of the shuffle of the training images");
  examples::add_checkpoint_flags(f);
  f.parse(argc, argv);
  const int epochs = static_cast<int>(f.integer("epochs", 1, 10000));
  const int batch = static_cast<int>(f.integer("batch", 1, 60000));
  const double lr = f.real("lr", 1e-6, 100);
  const double lr_decay = f.real("lr-decay", 0.01, 1);
  const examples::SspFlags sf = examples::ssp_flags(f);
  const int staleness = sf.staleness, servers = sf.servers, logical = sf.logical,
            executors = sf.executors, tpc = sf.tasks_per_clock, straggler = sf.straggler;
  const double task_ms = sf.task_ms, sfactor = sf.straggler_factor, sdelay = sf.straggler_delay_s;
  const double eval_every = f.real("eval-interval", 0, 1e6);
  const int eval_samples = static_cast<int>(f.integer("eval-samples", 1, 10000));
  const double target = f.real("target-acc", 0, 1);
  const auto seed = static_cast<std::uint64_t>(f.integer("seed", 0, 1LL << 62));
  const examples::CheckpointFlags ck = examples::checkpoint_flags(f);

  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto die = [&](const std::string &msg, int code) {
    if (rank == 0) std::fprintf(stderr, "logreg: %s\n", msg.c_str());
    MPI_Finalize();
    std::exit(code);
  };
  // Every rank loads the data; all must succeed before any starts the parameter server.
  examples::Images train, test;
  std::string err;
  try {
    train = examples::load_idx(examples::dataset_dir(f.str("data")), "train");
    test = examples::load_idx(examples::dataset_dir(f.str("data")), "t10k");
    if (train.dim != test.dim) throw std::runtime_error("train and test images differ in size");
  } catch (const std::exception &e) {
    err = e.what();
  }
  int bad = err.empty() ? 0 : 1, anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (anybad)
    die("--data: " + (err.empty() ? std::string("another rank could not read the data") : err), 2);
  if (rank == 0) autotune::set_stderr_log_sink("logreg", autotune::LogLevel::info);

  int rc = 0;
  try {
    ssp::Options o;
    o.staleness = staleness;
    o.servers = servers;
    o.logical_servers = logical;
    o.app = "logreg";
    ssp::Context ctx(MPI_COMM_WORLD, o);
    if (straggler >= 0 && (straggler < ctx.servers() || straggler >= size))
      die("--straggler-rank: '" + std::to_string(straggler) + "' is not a worker rank; allowed: " +
              std::to_string(ctx.servers()) + " to " + std::to_string(size - 1) + " or -1",
          2);
    const int rows = train.dim + 1;
    auto w = ctx.table<float>("w", rows, examples::kClasses);
    const std::size_t msize = static_cast<std::size_t>(rows) * examples::kClasses;

    std::vector<std::uint32_t> perm(static_cast<std::size_t>(train.n));
    for (int i = 0; i < train.n; ++i)
      perm[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(i);
    std::mt19937_64 rng(seed);
    std::shuffle(perm.begin(), perm.end(), rng);

    const auto store = examples::open_checkpoint_store(ck, MPI_COMM_WORLD);
    if (rank == 0 && store)
      std::printf("logreg: checkpoints: %s\n", examples::describe_store(ck, store.get()).c_str());
    int job_executors = executors ? executors : 4 * ctx.workers();
    if (ck.restore) {
      auto info = ctx.restore(*store);
      if (info.has_job && !executors) job_executors = info.job_executors;  // keep the job's shape
      const auto restored = w.pull_all();
      if (rank == 0)
        std::printf(
            "logreg: restored %s (clock %lld, taken with %d workers, %d servers) model=%s\n",
            info.id.c_str(), static_cast<long long>(info.clock), info.workers, info.servers,
            examples::digest(restored.data(), restored.size() * sizeof(float)).c_str());
    }
    if (rank == 0)
      std::printf(
          "logreg: %d ranks (%d workers, %d server%s), %s, %d epochs, batch %d, lr %g, "
          "%d train / %d test images\n",
          size, ctx.workers(), ctx.servers(), ctx.servers() == 1 ? "" : "s",
          ctx.policy().name().c_str(), epochs, batch, lr, train.n, test.n);
    std::fflush(stdout);

    examples::Straggler slow(rank == straggler, sfactor, sdelay);
    std::vector<float> model(msize), grad(msize);
    // The first worker copies its view of the model every --eval-interval seconds (a copy costs
    // microseconds, so training is not disturbed); the copies are evaluated after training.
    double t_start = 0, copy_s = 0, next_eval = eval_every, reached = -1;
    const bool evaluator = ctx.worker_index() == 0;
    auto train_time = [&] { return now_s() - t_start - copy_s; };
    struct Snap {
      double t;
      std::int64_t clock;
      std::vector<float> w;
    };
    std::vector<Snap> snaps;

    ssp::Job job;
    job.executors = job_executors;
    job.units = static_cast<std::uint64_t>(train.n);
    job.epochs = epochs;
    job.task_ms = task_ms;
    job.tasks_per_clock = tpc;
    job.initial_task_units = static_cast<std::uint64_t>(batch) * 4;
    job.checkpoint_store = ck.every > 0 ? store.get() : nullptr;
    job.checkpoint_every = ck.every;
    job.stop_at_clock = ck.stop_at;
    if (evaluator && eval_every > 0)
      job.after_clock = [&](std::int64_t clock) {
        const double t = train_time();
        if (t < next_eval) return;
        const double a = now_s();
        snaps.push_back({t, clock, std::vector<float>(msize)});
        w.get_rows(0, rows, snaps.back().w.data());
        next_eval = t + eval_every;
        copy_s += now_s() - a;
      };
    t_start = now_s();
    auto res = ctx.run(job, [&](ssp::Task &t) {
      for (std::uint64_t u = t.begin; u < t.end; u += static_cast<std::uint64_t>(batch)) {
        const int n =
            static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(batch), t.end - u));
        const double a = now_s();
        w.get_rows(0, rows, model.data());
        std::fill(grad.begin(), grad.end(), 0.0f);
        examples::lr_gradient(train, &perm[u], n, model.data(), grad.data());
        const float scale = static_cast<float>(-lr * std::pow(lr_decay, t.epoch) / n);
        for (auto &g : grad) g *= scale;
        w.inc_rows(0, rows, grad.data());
        slow.after_batch(now_s() - a);
      }
    });
    const double trained_s = evaluator ? train_time() : 0;
    for (const auto &sn : snaps) {
      const double acc = examples::lr_accuracy(test, sn.w.data(), eval_samples);
      if (reached < 0 && acc >= target) reached = sn.t;
      std::printf("eval t=%.3f clock=%lld acc=%.4f\n", sn.t, static_cast<long long>(sn.clock), acc);
    }
    std::fflush(stdout);
    // The evaluator's figures go to rank 0: training time, time to the target accuracy.
    double mine[2] = {trained_s, evaluator ? reached : -1e300}, agg[2];
    MPI_Allreduce(mine, agg, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    auto final_model = w.pull_all();
    if (rank == 0) {
      const double acc = examples::lr_accuracy(test, final_model.data(), test.n);
      std::uint64_t units = 0;
      std::string tasks;
      for (std::size_t i = 0; i < res.units_per_worker.size(); ++i) {
        units += res.units_per_worker[i];
        tasks += (i ? "," : "") + std::to_string(res.tasks_per_worker[i]);
      }
      std::printf(
          "final: consistency=%s ranks=%d workers=%d servers=%d epochs=%d finished=%d "
          "test_acc=%.4f train_s=%.3f samples=%llu samples_per_s=%.0f target_acc=%.3f "
          "time_to_target_s=%.3f tasks_per_worker=%s straggler_rank=%d checkpoints=%llu "
          "clock=%lld model=%s\n",
          ctx.policy().name().c_str(), size, ctx.workers(), ctx.servers(), epochs,
          res.finished ? 1 : 0, acc, agg[0], static_cast<unsigned long long>(units),
          agg[0] > 0 ? static_cast<double>(units) / agg[0] : 0.0, target,
          agg[1] >= 0 ? agg[1] : -1.0, tasks.c_str(), straggler,
          static_cast<unsigned long long>(res.checkpoints), static_cast<long long>(res.clock),
          examples::digest(final_model.data(), final_model.size() * sizeof(float)).c_str());
      if (!res.finished)
        std::printf("logreg: suspended at clock %lld; resume with --restore\n",
                    static_cast<long long>(res.clock));
      std::fflush(stdout);
    }
    ctx.finish();
  } catch (const ssp::Error &e) {
    die(e.what(), 2);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "logreg: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return rc;
}
