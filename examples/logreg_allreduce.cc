// logreg_allreduce: the same logistic regression as logreg, data-parallel with MPI_Allreduce
// (bulk-synchronous: every rank computes the gradient of its own mini-batch, the gradients are
// summed, every rank applies the same step).  This is what MPI users write without a parameter
// server; the benchmarks compare libssp against it.  Each sample moves the model by lr/batch times
// its gradient, as in logreg, so the same --lr and --batch mean the same step.
//
//   mpirun -np 4 build/examples/logreg_allreduce --epochs 3
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"

using examples::now_s;

int main(int argc, char **argv) {
  examples::Flags f("logreg_allreduce",
                    "logreg_allreduce [options]\n\nMultinomial logistic regression on "
                    "Fashion-MNIST, data-parallel with MPI_Allreduce (the baseline\nof libssp's "
                    "benchmarks).  Every rank trains on its static share of the images.");
  f.add("data", "DIR|NAME", "fashion-mnist",
        "directory of the IDX .gz files, or a data set name under /usr/share/datasets");
  f.add("epochs", "N", "5", "passes over the training images");
  f.add("batch", "N", "32", "mini-batch size of an SGD step, per rank");
  f.add("lr", "X", "0.01", "learning rate");
  f.add("lr-decay", "X", "1", "the learning rate is multiplied by X after each epoch");
  f.add("straggler-rank", "R", "-1", "rank to slow down (-1: none)");
  f.add("straggler-factor", "F", "1", "the straggler's batches take F times as long");
  f.add("straggler-delay-ms", "MS", "0", "extra delay after each of the straggler's batches");
  f.add("eval-interval", "S", "0.5",
        "seconds of training between model snapshots evaluated after training (0: none)");
  f.add("eval-samples", "N", "10000", "test images used to evaluate the snapshots");
  f.add("target-acc", "A", "0.8",
        "report the training time at which this test accuracy is reached");
  f.add("seed", "N", "1", "seed of the shuffle of the training images");
  f.parse(argc, argv);
  const int epochs = static_cast<int>(f.integer("epochs", 1, 10000));
  const int batch = static_cast<int>(f.integer("batch", 1, 60000));
  const double lr = f.real("lr", 1e-6, 100);
  const double lr_decay = f.real("lr-decay", 0.01, 1);
  const int straggler = static_cast<int>(f.integer("straggler-rank", -1, 1 << 20));
  const double sfactor = f.real("straggler-factor", 1, 1000);
  const double sdelay = f.real("straggler-delay-ms", 0, 1e6) / 1000.0;
  const double eval_every = f.real("eval-interval", 0, 1e6);
  const int eval_samples = static_cast<int>(f.integer("eval-samples", 1, 10000));
  const double target = f.real("target-acc", 0, 1);
  const auto seed = static_cast<std::uint64_t>(f.integer("seed", 0, 1LL << 62));

  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto die = [&](const std::string &msg) {
    if (rank == 0) std::fprintf(stderr, "logreg_allreduce: %s\n", msg.c_str());
    MPI_Finalize();
    std::exit(2);
  };
  if (straggler >= size)
    die("--straggler-rank: '" + std::to_string(straggler) + "' is not a rank; allowed: -1 to " +
        std::to_string(size - 1));
  examples::Images train, test;
  std::string err;
  try {
    train = examples::load_idx(examples::dataset_dir(f.str("data")), "train");
    test = examples::load_idx(examples::dataset_dir(f.str("data")), "t10k");
  } catch (const std::exception &e) {
    err = e.what();
  }
  int bad = err.empty() ? 0 : 1, anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (anybad)
    die("--data: " + (err.empty() ? std::string("another rank could not read the data") : err));

  std::vector<std::uint32_t> perm(static_cast<std::size_t>(train.n));
  for (int i = 0; i < train.n; ++i)
    perm[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(i);
  std::mt19937_64 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  // Static partition: rank r owns [r*n/size, (r+1)*n/size); every rank takes the same number of
  // steps per epoch.
  const std::size_t lo = static_cast<std::size_t>(train.n) * rank / size;
  const std::size_t share = static_cast<std::size_t>(train.n) / size;
  const std::size_t steps = (share + batch - 1) / batch;

  const int rows = train.dim + 1;
  const std::size_t msize = static_cast<std::size_t>(rows) * examples::kClasses;
  std::vector<float> model(msize, 0.0f), grad(msize), sum(msize);
  examples::Straggler slow(rank == straggler, sfactor, sdelay);
  if (rank == 0)
    std::printf("logreg_allreduce: %d ranks, MPI_Allreduce, %d epochs, batch %d per rank, lr %g\n",
                size, epochs, batch, lr);
  std::fflush(stdout);
  // Rank 0 copies the model every --eval-interval seconds; the copies are evaluated after training.
  double eval_s = 0, next_eval = eval_every, reached = -1;
  struct Snap {
    double t;
    std::size_t step;
    std::vector<float> w;
  };
  std::vector<Snap> snaps;
  std::uint64_t samples = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t_start = now_s();
  auto train_time = [&] { return now_s() - t_start - eval_s; };
  for (int e = 0; e < epochs; ++e) {
    for (std::size_t s = 0; s < steps; ++s) {
      const std::size_t b = s * static_cast<std::size_t>(batch);
      const int n =
          static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(batch), share - b));
      const double a = now_s();
      std::fill(grad.begin(), grad.end(), 0.0f);
      examples::lr_gradient(train, &perm[lo + b], n, model.data(), grad.data());
      const float scale = static_cast<float>(-lr * std::pow(lr_decay, e) / n);
      for (auto &g : grad) g *= scale;
      slow.after_batch(now_s() - a);
      MPI_Allreduce(grad.data(), sum.data(), static_cast<int>(msize), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
      for (std::size_t i = 0; i < msize; ++i) model[i] += sum[i];
      samples += static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(size);
      if (rank == 0 && eval_every > 0 && train_time() >= next_eval) {
        const double t0 = now_s();
        snaps.push_back({train_time(), e * steps + s + 1, model});
        next_eval = snaps.back().t + eval_every;
        eval_s += now_s() - t0;
      }
    }
  }
  const double train_s = train_time();
  if (rank == 0) {
    for (const auto &sn : snaps) {
      const double acc = examples::lr_accuracy(test, sn.w.data(), eval_samples);
      if (reached < 0 && acc >= target) reached = sn.t;
      std::printf("eval t=%.3f step=%zu acc=%.4f\n", sn.t, sn.step, acc);
    }
    const double acc = examples::lr_accuracy(test, model.data(), test.n);
    std::printf(
        "final: consistency=allreduce ranks=%d workers=%d servers=0 epochs=%d finished=1 "
        "test_acc=%.4f train_s=%.3f samples=%llu samples_per_s=%.0f target_acc=%.3f "
        "time_to_target_s=%.3f straggler_rank=%d\n",
        size, size, epochs, acc, train_s, static_cast<unsigned long long>(samples),
        static_cast<double>(samples) / train_s, target, reached, straggler);
  }
  MPI_Finalize();
  return 0;
}
