#include "common.hpp"

#include <time.h>
#include <mpi.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "autotune/error.hpp"
#include "autotune/units.hpp"
#include "ssp/consistency.hpp"

namespace examples {

int launcher_rank() {
  for (const char *v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "PMI_RANK"})
    if (const char *s = std::getenv(v); s && *s) return std::atoi(s);
  return 0;
}

void Flags::add(const std::string &name, const std::string &value_name, std::string def,
                const std::string &help) {
  order_.push_back(name);
  specs_[name] = Spec{value_name, def, help, def, false};
}

void Flags::fail(const std::string &msg) const {
  // Every rank gets here with the same flags.  Rank 0 prints before any rank exits (a launcher
  // kills the others when the first one exits with an error, maybe before rank 0 printed).
  int inited = 0, rank = launcher_rank();
  MPI_Initialized(&inited);
  if (!inited) MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::fprintf(stderr, "%s: %s\n", prog_.c_str(), msg.c_str());
    std::fflush(stderr);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  std::exit(2);
}

void Flags::parse(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      if (launcher_rank() == 0) {
        std::printf("usage: %s\n\noptions:\n", usage_.c_str());
        for (const auto &n : order_) {
          const auto &s = specs_.at(n);
          std::string left = "  --" + n + (s.value_name.empty() ? "" : " " + s.value_name);
          std::printf("%-30s %s%s\n", left.c_str(), s.help.c_str(),
                      s.def.empty() ? "" : (" (default: " + s.def + ")").c_str());
        }
        std::printf("  %-28s %s\n", "--help", "this text");
      }
      std::exit(0);
    }
    if (a.rfind("--", 0) != 0) fail("unexpected argument '" + a + "' (see --help)");
    std::string name = a.substr(2), value;
    const auto eq = name.find('=');
    bool has_value = false;
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    auto it = specs_.find(name);
    if (it == specs_.end()) fail("unknown option '--" + name + "' (see --help)");
    if (!has_value) {
      if (it->second.value_name.empty()) {
        value = "1";
      } else {
        if (i + 1 >= argc) fail("--" + name + ": missing value " + it->second.value_name);
        value = argv[++i];
      }
    }
    it->second.value = value;
    it->second.given = true;
  }
}

std::string Flags::str(const std::string &name) const { return specs_.at(name).value; }
bool Flags::given(const std::string &name) const { return specs_.at(name).given; }

long long Flags::integer(const std::string &name, long long lo, long long hi) const {
  try {
    return autotune::parse_int("--" + name, str(name), lo, hi);
  } catch (const autotune::Error &e) {
    fail(e.what());
  }
}

double Flags::real(const std::string &name, double lo, double hi) const {
  try {
    return autotune::parse_double("--" + name, str(name), lo, hi);
  } catch (const autotune::Error &e) {
    fail(e.what());
  }
}

int parse_staleness(const std::string &v) {
  if (v == "asp" || v == "ASP") return ssp::kAsync;
  try {
    return static_cast<int>(autotune::parse_int("--staleness", v, 0, 1000000));
  } catch (const autotune::Error &) {
    return -1;
  }
}

void add_ssp_flags(Flags &f, const SspFlagHelp &h) {
  f.add("staleness", "N|asp", "2", "0 = BSP, N = SSP(N), asp = no bound");
  f.add("servers", "N", "", "parameter-server ranks (default: $AUTOTUNE_PS, else 1)");
  f.add("logical-servers", "N", "16", h.shards + " spread over the server ranks");
  f.add("executors", "N", "", "logical executors (default: " + h.executors_default + ")");
  f.add("task-ms", "MS", h.task_ms,
        "target duration of a micro-task (a worker's share of a clock: SSP(N) lets a worker "
        "miss the others' last N clocks, so shorter micro-tasks mean fewer missed steps and "
        "more exchanges)");
  f.add("task-max", "N", "0",
        "at most N " + h.work_unit + " in a micro-task (0: no bound); the shorter of this and "
        "--task-ms wins, so that the staleness in steps stays the same on a faster machine");
  f.add("tasks-per-clock", "N", "0", "micro-tasks per clock (0: one per worker)");
  f.add("fresh-reads", "0|1", "1",
        "1: a model read whole is fetched again within the clock once every worker has finished "
        "the previous one (libssp's Options::fresh_reads); 0: once per clock");
  f.add("straggler-rank", "R", "-1", "rank to slow down (a worker; -1: none)");
  f.add("straggler-factor", "F", "1", "the straggler's " + h.unit + " take F times as long");
  f.add("straggler-delay-ms", "MS", "0", "extra delay after each of the straggler's " + h.unit);
}

SspFlags ssp_flags(const Flags &f) {
  SspFlags s;
  s.staleness = parse_staleness(f.str("staleness"));
  if (s.staleness < 0)
    f.fail("--staleness: '" + f.str("staleness") +
           "' is not allowed; allowed: a whole number from 0 to 1000000, or asp");
  s.servers = f.given("servers") ? static_cast<int>(f.integer("servers", 1, 1 << 20)) : -1;
  s.logical = static_cast<int>(f.integer("logical-servers", 1, 65536));
  s.executors = f.given("executors") ? static_cast<int>(f.integer("executors", 1, 1000000)) : 0;
  s.task_ms = f.real("task-ms", 1, 900);
  s.task_max = static_cast<std::uint64_t>(f.integer("task-max", 0, 1000000000));
  s.tasks_per_clock = static_cast<int>(f.integer("tasks-per-clock", 0, 1000000));
  s.fresh_reads = f.integer("fresh-reads", 0, 1) == 1;
  s.straggler = static_cast<int>(f.integer("straggler-rank", -1, 1 << 20));
  s.straggler_factor = f.real("straggler-factor", 1, 1000);
  s.straggler_delay_s = f.real("straggler-delay-ms", 0, 1e6) / 1000.0;
  return s;
}

std::string dataset_dir(const std::string &arg) {
  if (arg.find('/') != std::string::npos || arg == "." || arg == "..") return arg;
  return "/usr/share/datasets/" + arg;
}

namespace {

struct Gz {
  gzFile f = nullptr;
  ~Gz() {
    if (f) gzclose(f);
  }
};

std::uint32_t be32(const unsigned char *p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         p[3];
}

void read_all(Gz &g, const std::string &path, void *out, std::size_t n) {
  auto *p = static_cast<char *>(out);
  while (n > 0) {
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n, 1u << 30));
    const int r = gzread(g.f, p, chunk);
    if (r <= 0) throw std::runtime_error("'" + path + "': truncated or not gzip data");
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

}  // namespace

Images load_idx(const std::string &dir, const std::string &prefix, int max_samples) {
  Images d;
  std::uint32_t n_images = 0;
  const std::string ip = dir + "/" + prefix + "-images-idx3-ubyte.gz";
  const std::string lp = dir + "/" + prefix + "-labels-idx1-ubyte.gz";
  {
    Gz g;
    g.f = gzopen(ip.c_str(), "rb");
    if (!g.f) throw std::runtime_error("cannot open '" + ip + "': " + std::strerror(errno));
    unsigned char h[16];
    read_all(g, ip, h, 16);
    if (be32(h) != 2051) throw std::runtime_error("'" + ip + "': not an IDX image file (magic)");
    const std::uint32_t n = be32(h + 4), rows = be32(h + 8), cols = be32(h + 12);
    if (n == 0 || n > 10000000 || rows * cols == 0 || rows * cols > 100000)
      throw std::runtime_error("'" + ip + "': implausible shape");
    n_images = n;
    // Only the images used are decompressed (the file's first max_samples).
    d.n = max_samples > 0 ? std::min(static_cast<int>(n), max_samples) : static_cast<int>(n);
    d.dim = static_cast<int>(rows * cols);
    d.x.resize(static_cast<std::size_t>(d.n) * d.dim);
    read_all(g, ip, d.x.data(), d.x.size());
  }
  {
    Gz g;
    g.f = gzopen(lp.c_str(), "rb");
    if (!g.f) throw std::runtime_error("cannot open '" + lp + "': " + std::strerror(errno));
    unsigned char h[8];
    read_all(g, lp, h, 8);
    if (be32(h) != 2049) throw std::runtime_error("'" + lp + "': not an IDX label file (magic)");
    if (be32(h + 4) != n_images)
      throw std::runtime_error("'" + lp + "': label count differs from the image count");
    d.y.resize(static_cast<std::size_t>(d.n));
    read_all(g, lp, d.y.data(), d.y.size());
    for (auto v : d.y)
      if (v >= kClasses) throw std::runtime_error("'" + lp + "': label out of range");
  }
  return d;
}

namespace {
// logits = W^T x (+ bias) for one sample, skipping zero pixels.
void logits(const Images &d, std::uint32_t i, const float *w, float *z) {
  const std::uint8_t *x = &d.x[static_cast<std::size_t>(i) * d.dim];
  const float *bias = w + static_cast<std::size_t>(d.dim) * kClasses;
  for (int k = 0; k < kClasses; ++k) z[k] = bias[k];
  for (int j = 0; j < d.dim; ++j) {
    if (!x[j]) continue;
    const float v = x[j] * (1.0f / 255.0f);
    const float *wr = w + static_cast<std::size_t>(j) * kClasses;
    for (int k = 0; k < kClasses; ++k) z[k] += v * wr[k];
  }
}
}  // namespace

double lr_gradient(const Images &d, const std::uint32_t *idx, int n, const float *w, float *grad) {
  double loss = 0;
  float z[kClasses];
  for (int b = 0; b < n; ++b) {
    const std::uint32_t i = idx[b];
    logits(d, i, w, z);
    float mx = z[0];
    for (int k = 1; k < kClasses; ++k) mx = std::max(mx, z[k]);
    float sum = 0;
    for (int k = 0; k < kClasses; ++k) sum += (z[k] = std::exp(z[k] - mx));
    const int y = d.y[i];
    loss -= std::log(std::max(z[y] / sum, 1e-30f));
    for (int k = 0; k < kClasses; ++k) z[k] = z[k] / sum - (k == y ? 1.0f : 0.0f);
    const std::uint8_t *x = &d.x[static_cast<std::size_t>(i) * d.dim];
    for (int j = 0; j < d.dim; ++j) {
      if (!x[j]) continue;
      const float v = x[j] * (1.0f / 255.0f);
      float *g = grad + static_cast<std::size_t>(j) * kClasses;
      for (int k = 0; k < kClasses; ++k) g[k] += v * z[k];
    }
    float *gb = grad + static_cast<std::size_t>(d.dim) * kClasses;
    for (int k = 0; k < kClasses; ++k) gb[k] += z[k];
  }
  return loss;
}

double lr_accuracy(const Images &d, const float *w, int limit) {
  const int n = std::min(limit, d.n);
  int right = 0;
  float z[kClasses];
  for (int i = 0; i < n; ++i) {
    logits(d, static_cast<std::uint32_t>(i), w, z);
    int best = 0;
    for (int k = 1; k < kClasses; ++k)
      if (z[k] > z[best]) best = k;
    right += best == d.y[static_cast<std::size_t>(i)];
  }
  return n ? static_cast<double>(right) / n : 0;
}

void Straggler::after_batch(double batch_s) {
  if (!active_) return;
  owed_ += (factor_ - 1.0) * batch_s + delay_s_;
  if (owed_ < 1e-3) return;
  const double t0 = now_s();
  timespec ts{static_cast<time_t>(owed_), static_cast<long>((owed_ - std::floor(owed_)) * 1e9)};
  nanosleep(&ts, nullptr);
  const double slept = now_s() - t0;
  owed_ -= slept;
  slept_ += slept;
}

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace examples
