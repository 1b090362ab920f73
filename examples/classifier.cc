#include "classifier.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "autotune/log.hpp"
#include "checkpoint.hpp"
#include "ssp/ssp.hpp"

namespace examples {

namespace {

// The flags and data both drivers share.
struct Common {
  int epochs = 0, batch = 0, eval_samples = 0, train_samples = 0;
  double lr = 0, lr_decay = 1, eval_every = 0, target = 0;
  std::uint64_t seed = 0;
};

void add_common_flags(Flags &f, const ClassifierProgram &p, bool ssp) {
  f.add("data", "DIR|NAME", "fashion-mnist",
        "directory of the IDX .gz files, or a data set name under /usr/share/datasets");
  f.add("epochs", "N", p.epochs, "passes over the training images");
  f.add("train-samples", "N", "0", "train on the first N training images, the only ones read (0: all)");
  f.add("batch", "N", "32", ssp ? "mini-batch size of an SGD step" : "mini-batch size of an SGD step, per rank");
  f.add("lr", "X", p.lr,
        ssp ? "learning rate of a worker's step; every worker's step is added to the model (the "
              "workers' steps sum, as the ranks' gradients in the _allreduce programs; PyTorch DDP "
              "averages them: its loss times the number of workers makes the same steps)"
            : "learning rate; the ranks' gradients are summed (MPI_SUM), so every rank's step is "
              "added to the model (PyTorch DDP averages them: its loss times the number of ranks "
              "makes the same steps)");
  f.add("lr-decay", "X", "1", "the learning rate is multiplied by X after each epoch");
}

void add_eval_flags(Flags &f, const ClassifierProgram &p) {
  f.add("eval-interval", "S", p.eval_interval,
        "seconds of training between model snapshots evaluated after training (0: none)");
  f.add("eval-samples", "N", p.eval_samples, "test images used to evaluate the snapshots");
  f.add("target-acc", "A", "0.8",
        "report the training time at which this test accuracy is reached");
  f.add("seed", "N", "1", "seed of the shuffle of the training images and of the initial model");
}

Common common_flags(const Flags &f) {
  Common c;
  c.epochs = static_cast<int>(f.integer("epochs", 1, 10000));
  c.train_samples = static_cast<int>(f.integer("train-samples", 0, 100000000));
  c.batch = static_cast<int>(f.integer("batch", 1, 60000));
  c.lr = f.real("lr", 1e-6, 100);
  c.lr_decay = f.real("lr-decay", 0.01, 1);
  c.eval_every = f.real("eval-interval", 0, 1e6);
  c.eval_samples = static_cast<int>(f.integer("eval-samples", 1, 10000));
  c.target = f.real("target-acc", 0, 1);
  c.seed = static_cast<std::uint64_t>(f.integer("seed", 0, 1LL << 62));
  return c;
}

// Loads the data on every rank: the training images used (--train-samples: only the file's
// first N are read), and the test images where they are evaluated (rank 0, and every rank with
// --eval-interval, as which one is the first worker is known only later).  On an error rank 0
// prints one line and every rank exits 2.
void load_data(const ClassifierProgram &p, const Flags &f, const Common &c, Images *train,
               Images *test) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string err;
  try {
    *train = load_idx(dataset_dir(f.str("data")), "train", c.train_samples);
    if (rank == 0 || c.eval_every > 0) {
      *test = load_idx(dataset_dir(f.str("data")), "t10k");
      if (train->dim != test->dim)
        throw std::runtime_error("train and test images differ in size");
    }
  } catch (const std::exception &e) {
    err = e.what();
  }
  int bad = err.empty() ? 0 : 1, anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (anybad) {
    if (rank == 0)
      std::fprintf(stderr, "%s: --data: %s\n", p.name.c_str(),
                   err.empty() ? "another rank could not read the data" : err.c_str());
    MPI_Finalize();
    std::exit(2);
  }
}

std::vector<std::uint32_t> shuffled(int n, std::uint64_t seed) {
  std::vector<std::uint32_t> perm(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(i);
  std::mt19937_64 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  return perm;
}

// Model copies taken during training (a copy costs far less than an evaluation), evaluated
// afterwards: prints one "eval" line each and returns the first time the target was reached (-1:
// never).
struct Snapshots {
  struct Snap {
    double t;
    std::int64_t step;
    std::vector<float> w;
  };
  std::vector<Snap> snaps;
  double evaluate(Classifier &m, const Images &test, int samples, double target,
                  const char *step_name) const {
    double reached = -1;
    for (const auto &sn : snaps) {
      const double acc = m.accuracy(test, sn.w.data(), samples);
      if (reached < 0 && acc >= target) reached = sn.t;
      std::printf("eval t=%.3f %s=%lld acc=%.4f\n", sn.t, step_name,
                  static_cast<long long>(sn.step), acc);
    }
    std::fflush(stdout);
    return reached;
  }
};

}  // namespace

int ssp_main(const ClassifierProgram &p, int argc, char **argv) {
  const char *prog = p.name.c_str();
  Flags f(p.name, p.name + " [options]\n\n" + p.summary +
                      "\nRun it under mpirun or srun --mpi=pmix with at least 2 ranks (the first "
                      "--servers ranks are\nparameter servers, the others workers).  Prints the "
                      "test accuracy as it trains and at the end.");
  add_common_flags(f, p, true);
  add_ssp_flags(f, {"model shards", "4 per worker, or the restored job's", p.task_ms, "batches",
                    "mini-batches"});
  add_eval_flags(f, p);
  add_checkpoint_flags(f);
  f.add("lag-damping", "0|1", "0",
        "1: a step computed from a model read that lacked k clocks of the other workers' steps "
        "(libssp's Context::read_lag) is scaled by 1/(1+k), a staleness-aware step; 0: every step "
        "in full");
  if (p.add_flags) p.add_flags(f);
  f.parse(argc, argv);
  const Common c = common_flags(f);
  const SspFlags sf = ssp_flags(f);
  const bool lag_damping = f.integer("lag-damping", 0, 1) == 1;
  const CheckpointFlags ck = checkpoint_flags(f);

  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto die = [&](const std::string &msg, int code) {
    if (rank == 0) std::fprintf(stderr, "%s: %s\n", prog, msg.c_str());
    MPI_Finalize();
    std::exit(code);
  };
  // Every rank loads the data; all must succeed before any starts the parameter server.
  Images train, test;
  load_data(p, f, c, &train, &test);
  const std::unique_ptr<Classifier> model_fn = p.make(f, train.dim);
  if (rank == 0) autotune::set_stderr_log_sink(prog, autotune::LogLevel::info);

  try {
    ssp::Options o;
    o.staleness = sf.staleness;
    o.servers = sf.servers;
    o.logical_servers = sf.logical;
    o.fresh_reads = sf.fresh_reads;
    o.app = p.name;
    // A dense model is dirtied whole by every step: sending it early, before the clock, each
    // time the buffered increments pass flush_bytes would send it once per step instead of once
    // per clock.
    const std::size_t model_bytes =
        sizeof(float) * static_cast<std::size_t>(model_fn->rows() * model_fn->cols());
    o.flush_bytes = std::min(std::max(o.flush_bytes, 2 * model_bytes), std::size_t{1} << 30);
    ssp::Context ctx(MPI_COMM_WORLD, o);
    if (sf.straggler >= 0 && (sf.straggler < ctx.servers() || sf.straggler >= size))
      die("--straggler-rank: '" + std::to_string(sf.straggler) +
              "' is not a worker rank; allowed: " + std::to_string(ctx.servers()) + " to " +
              std::to_string(size - 1) + " or -1",
          2);
    const std::int64_t rows = model_fn->rows();
    auto w = ctx.table<float>("w", rows, model_fn->cols());
    const std::size_t msize = static_cast<std::size_t>(rows * model_fn->cols());
    const std::vector<std::uint32_t> perm = shuffled(train.n, c.seed);

    const auto store = open_checkpoint_store(ck, MPI_COMM_WORLD);
    if (rank == 0 && store)
      std::printf("%s: checkpoints: %s\n", prog, describe_store(ck, store.get()).c_str());
    int job_executors = sf.executors ? sf.executors : 4 * ctx.workers();
    if (ck.restore) {
      auto info = ctx.restore(*store);
      if (info.has_job && !sf.executors) job_executors = info.job_executors;  // the job's shape
      const auto restored = w.pull_all();
      if (rank == 0)
        std::printf("%s: restored %s (clock %lld, taken with %d workers, %d servers) model=%s\n",
                    prog, info.id.c_str(), static_cast<long long>(info.clock), info.workers,
                    info.servers, digest(restored.data(), restored.size() * sizeof(float)).c_str());
    } else {
      // The initial model: the first worker adds it to the zero table; the barrier makes it
      // visible to every worker before the first step.
      // (Every rank computes the same w0, so all agree on whether there is a barrier.)
      std::vector<float> w0(msize, 0.0f);
      model_fn->init(w0.data(), c.seed);
      if (std::any_of(w0.begin(), w0.end(), [](float v) { return v != 0; })) {
        if (ctx.worker_index() == 0) w.inc_rows(0, rows, w0.data());
        ctx.barrier();
      }
    }
    if (rank == 0)
      std::printf(
          "%s: %d ranks (%d workers, %d server%s), %s, %d epochs, batch %d, lr %g, "
          "%d train / %d test images\n",
          prog, size, ctx.workers(), ctx.servers(), ctx.servers() == 1 ? "" : "s",
          ctx.policy().name().c_str(), c.epochs, c.batch, c.lr, train.n, test.n);
    std::fflush(stdout);

    Straggler slow(rank == sf.straggler, sf.straggler_factor, sf.straggler_delay_s);
    std::vector<float> model(msize), grad(msize);
    // The first worker copies its view of the model every --eval-interval seconds.
    double t_start = 0, copy_s = 0, next_eval = c.eval_every;
    const bool evaluator = ctx.worker_index() == 0;
    auto train_time = [&] { return now_s() - t_start - copy_s; };
    Snapshots snaps;

    // The work units are mini-batches (the last one may be short), so that micro-tasks are
    // whole steps.
    const std::uint64_t B = static_cast<std::uint64_t>(c.batch);
    const std::uint64_t batches = (static_cast<std::uint64_t>(train.n) + B - 1) / B;
    ssp::Job job;
    job.executors = static_cast<int>(std::min<std::uint64_t>(job_executors, batches));
    job.units = batches;
    job.samples_per_unit = B;
    job.epochs = c.epochs;
    job.task_ms = sf.task_ms;
    job.max_task_units = sf.task_max;
    job.tasks_per_clock = sf.tasks_per_clock;
    job.initial_task_units = 4;
    job.checkpoint_store = ck.every > 0 ? store.get() : nullptr;
    job.checkpoint_every = ck.every;
    job.stop_at_clock = ck.stop_at;
    if (evaluator && c.eval_every > 0)
      job.after_clock = [&](std::int64_t clock) {
        const double t = train_time();
        if (t < next_eval) return;
        const double a = now_s();
        snaps.snaps.push_back({t, clock, std::vector<float>(msize)});
        w.get_rows(0, rows, snaps.snaps.back().w.data());
        next_eval = t + c.eval_every;
        copy_s += now_s() - a;
      };
    // Where a worker's time goes: reading the model, computing the gradient, adding it, the
    // straggler's sleep; the rest of the training time is libssp's (clocks, waiting at the
    // staleness bound, asking for micro-tasks).
    double read_s = 0, compute_s = 0, inc_s = 0;
    std::uint64_t my_samples = 0;
    t_start = now_s();
    auto res = ctx.run(job, [&](ssp::Task &t) {
      for (std::uint64_t bi = t.begin; bi < t.end; ++bi) {
        const std::uint64_t u = bi * B;
        const int n = static_cast<int>(std::min<std::uint64_t>(B, train.n - u));
        my_samples += static_cast<std::uint64_t>(n);
        const double a = now_s();
        w.get_rows(0, rows, model.data());
        const double b = now_s();
        const double damp = lag_damping ? 1.0 / (1.0 + static_cast<double>(ctx.read_lag())) : 1.0;
        const float scale =
            static_cast<float>(-c.lr * std::pow(c.lr_decay, t.epoch) * damp / n);
        model_fn->gradient(train, &perm[u], n, model.data(), scale, grad.data());
        const double e = now_s();
        w.inc_rows(0, rows, grad.data());
        const double z = now_s();
        read_s += b - a;
        compute_s += e - b;
        inc_s += z - e;
        slow.after_batch(z - a);
      }
    });
    const double trained_s = evaluator ? train_time() : 0;
    if (ctx.is_worker()) {
      std::printf("time: worker=%d train_s=%.3f read_s=%.3f compute_s=%.3f inc_s=%.3f "
                  "straggler_sleep_s=%.3f other_s=%.3f\n",
                  ctx.worker_index(), train_time(), read_s, compute_s, inc_s, slow.slept_s(),
                  train_time() - read_s - compute_s - inc_s - slow.slept_s());
      std::fflush(stdout);
    }
    const double reached = snaps.evaluate(*model_fn, test, c.eval_samples, c.target, "clock");
    // The evaluator's figures go to rank 0: training time, time to the target accuracy.
    double mine[2] = {trained_s, evaluator ? reached : -1e300}, agg[2];
    MPI_Allreduce(mine, agg, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    std::uint64_t units = 0;
    MPI_Allreduce(&my_samples, &units, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    auto final_model = w.pull_all();
    if (rank == 0) {
      const double acc = model_fn->accuracy(test, final_model.data(), test.n);
      std::string tasks;
      for (std::size_t i = 0; i < res.tasks_per_worker.size(); ++i)
        tasks += (i ? "," : "") + std::to_string(res.tasks_per_worker[i]);
      std::printf(
          "final: consistency=%s ranks=%d workers=%d servers=%d epochs=%d finished=%d "
          "test_acc=%.4f train_s=%.3f samples=%llu samples_per_s=%.0f target_acc=%.3f "
          "time_to_target_s=%.3f tasks_per_worker=%s straggler_rank=%d checkpoints=%llu "
          "clock=%lld model=%s\n",
          ctx.policy().name().c_str(), size, ctx.workers(), ctx.servers(), c.epochs,
          res.finished ? 1 : 0, acc, agg[0], static_cast<unsigned long long>(units),
          agg[0] > 0 ? static_cast<double>(units) / agg[0] : 0.0, c.target,
          agg[1] >= 0 ? agg[1] : -1.0, tasks.c_str(), sf.straggler,
          static_cast<unsigned long long>(res.checkpoints), static_cast<long long>(res.clock),
          digest(final_model.data(), final_model.size() * sizeof(float)).c_str());
      if (!res.finished)
        std::printf("%s: suspended at clock %lld; resume with --restore\n", prog,
                    static_cast<long long>(res.clock));
      std::fflush(stdout);
    }
    ctx.finish();
  } catch (const ssp::Error &e) {
    die(e.what(), 2);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: rank %d: %s\n", prog, rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}

int allreduce_main(const ClassifierProgram &p, int argc, char **argv) {
  const char *prog = p.name.c_str();
  Flags f(p.name, p.name + " [options]\n\n" + p.summary +
                      "\nData-parallel with MPI_Allreduce (the baseline of libssp's benchmarks): "
                      "every rank trains on\nits static share of the images.");
  add_common_flags(f, p, false);
  f.add("straggler-rank", "R", "-1", "rank to slow down (-1: none)");
  f.add("straggler-factor", "F", "1", "the straggler's batches take F times as long");
  f.add("straggler-delay-ms", "MS", "0", "extra delay after each of the straggler's batches");
  add_eval_flags(f, p);
  if (p.add_flags) p.add_flags(f);
  f.parse(argc, argv);
  const Common c = common_flags(f);
  const int straggler = static_cast<int>(f.integer("straggler-rank", -1, 1 << 20));
  const double sfactor = f.real("straggler-factor", 1, 1000);
  const double sdelay = f.real("straggler-delay-ms", 0, 1e6) / 1000.0;

  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (straggler >= size) {
    if (rank == 0)
      std::fprintf(stderr, "%s: --straggler-rank: '%d' is not a rank; allowed: -1 to %d\n", prog,
                   straggler, size - 1);
    MPI_Finalize();
    std::exit(2);
  }
  Images train, test;
  load_data(p, f, c, &train, &test);
  const std::unique_ptr<Classifier> model_fn = p.make(f, train.dim);
  const std::vector<std::uint32_t> perm = shuffled(train.n, c.seed);
  // Static partition: rank r owns [r*n/size, (r+1)*n/size); every rank takes the same number of
  // steps per epoch.
  const std::size_t lo = static_cast<std::size_t>(train.n) * rank / size;
  const std::size_t share = static_cast<std::size_t>(train.n) / size;
  const std::size_t steps = (share + c.batch - 1) / c.batch;

  const std::size_t msize = static_cast<std::size_t>(model_fn->rows() * model_fn->cols());
  std::vector<float> model(msize, 0.0f), grad(msize), sum(msize);
  model_fn->init(model.data(), c.seed);
  Straggler slow(rank == straggler, sfactor, sdelay);
  if (rank == 0)
    std::printf("%s: %d ranks, MPI_Allreduce, %d epochs, batch %d per rank, lr %g\n", prog, size,
                c.epochs, c.batch, c.lr);
  std::fflush(stdout);
  // Rank 0 copies the model every --eval-interval seconds; the copies are evaluated after training.
  double eval_s = 0, next_eval = c.eval_every;
  Snapshots snaps;
  std::uint64_t samples = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t_start = now_s();
  auto train_time = [&] { return now_s() - t_start - eval_s; };
  for (int e = 0; e < c.epochs; ++e) {
    for (std::size_t s = 0; s < steps; ++s) {
      const std::size_t b = s * static_cast<std::size_t>(c.batch);
      const int n =
          static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(c.batch), share - b));
      const double a = now_s();
      const float scale = static_cast<float>(-c.lr * std::pow(c.lr_decay, e) / n);
      model_fn->gradient(train, &perm[lo + b], n, model.data(), scale, grad.data());
      slow.after_batch(now_s() - a);
      MPI_Allreduce(grad.data(), sum.data(), static_cast<int>(msize), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
      for (std::size_t i = 0; i < msize; ++i) model[i] += sum[i];
      samples += static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(size);
      if (rank == 0 && c.eval_every > 0 && train_time() >= next_eval) {
        const double t0 = now_s();
        snaps.snaps.push_back(
            {train_time(), static_cast<std::int64_t>(e * steps + s + 1), model});
        next_eval = snaps.snaps.back().t + c.eval_every;
        eval_s += now_s() - t0;
      }
    }
  }
  const double train_s = train_time();
  if (rank == 0) {
    const double reached = snaps.evaluate(*model_fn, test, c.eval_samples, c.target, "step");
    const double acc = model_fn->accuracy(test, model.data(), test.n);
    std::printf(
        "final: consistency=allreduce ranks=%d workers=%d servers=0 epochs=%d finished=1 "
        "test_acc=%.4f train_s=%.3f samples=%llu samples_per_s=%.0f target_acc=%.3f "
        "time_to_target_s=%.3f straggler_rank=%d model=%s\n",
        size, size, c.epochs, acc, train_s, static_cast<unsigned long long>(samples),
        static_cast<double>(samples) / train_s, c.target, reached, straggler,
        digest(model.data(), model.size() * sizeof(float)).c_str());
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}

namespace {

// Multinomial logistic regression (common.hpp's kernels): (dim + 1) x 10, zero at the start.
class LogReg : public Classifier {
 public:
  explicit LogReg(int dim) : dim_(dim) {}
  std::int64_t rows() const override { return dim_ + 1; }
  std::int64_t cols() const override { return kClasses; }
  void init(float *, std::uint64_t) const override {}
  double gradient(const Images &d, const std::uint32_t *idx, int n, const float *w, float scale,
                  float *grad) override {
    const std::size_t size = static_cast<std::size_t>(dim_ + 1) * kClasses;
    std::fill(grad, grad + size, 0.0f);
    const double loss = lr_gradient(d, idx, n, w, grad);
    for (std::size_t i = 0; i < size; ++i) grad[i] *= scale;
    return loss;
  }
  double accuracy(const Images &d, const float *w, int limit) override {
    return lr_accuracy(d, w, limit);
  }

 private:
  int dim_;
};

}  // namespace

ClassifierProgram logreg_program(const std::string &name) {
  ClassifierProgram p;
  p.name = name;
  p.summary = "Multinomial logistic regression on Fashion-MNIST.";
  p.make = [](const Flags &, int dim) { return std::make_unique<LogReg>(dim); };
  return p;
}

}  // namespace examples
