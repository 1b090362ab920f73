#include "autotune/adjust.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {

namespace {

std::string show(bool memory, std::uint64_t v) {
  return memory ? format_size(v << 20) : std::to_string(v);
}

std::string pct(double x) { return format_double(std::round(x * 100)) + "%"; }
std::string two(double x) { return format_double(std::round(x * 100) / 100); }

}  // namespace

std::optional<Adjustment> adjust(const Configuration &c, const RoleMeasure &worker,
                                 const RoleMeasure &server,
                                 const std::vector<Configuration> &allowed,
                                 const AdjustConf &conf) {
  Configuration cur = c;
  std::vector<std::string> reasons;

  auto apply = [&](const char *dim, const char *role, bool memory, const RoleMeasure &m,
                   auto getter, auto setter) {
    const std::uint64_t have = getter(cur);
    if (have == 0) return;
    // The values this dimension may take with every other one unchanged.
    std::set<std::uint64_t> vals;
    for (const Configuration &a : allowed) {
      Configuration x = cur;
      setter(x, getter(a));
      if (x == a) vals.insert(getter(a));
    }
    std::optional<std::uint64_t> want;
    std::string why;
    if (!memory && m.cpu_max && *m.cpu_max < conf.cpu_idle * static_cast<double>(have)) {
      for (std::uint64_t v : vals)
        if (v < have && *m.cpu_max < conf.cpu_target * static_cast<double>(v)) {
          want = v;
          break;
        }
      why = std::string(role) + "' busiest rank used " + two(*m.cpu_max) + " of " +
            std::to_string(have) + " CPUs (below AdjustCpuIdle=" + format_double(conf.cpu_idle) +
            " of them)";
    } else if (memory && m.peak_rss_mb) {
      const double peak = *m.peak_rss_mb, limit = static_cast<double>(have);
      const bool high = peak > conf.mem_high * limit;
      const bool low = conf.mem_low > 0 && peak < conf.mem_low * limit;
      if (high || low) {
        for (std::uint64_t v : vals)
          if (peak < conf.mem_high * static_cast<double>(v)) {
            want = v;
            break;
          }
        if (!want && high && !vals.empty() && *vals.rbegin() > have) want = *vals.rbegin();
        why = std::string(role) + " peaked at " + std::to_string(std::llround(peak)) +
              " MB of their " + show(memory, have) + " (" + pct(peak / limit) + ", " +
              (high ? "above AdjustMemHigh=" : "below AdjustMemLow=") +
              pct(high ? conf.mem_high : conf.mem_low) + ")";
      }
    }
    if (!want || *want == have) return;
    setter(cur, *want);
    reasons.push_back(why + ": " + dim + " " + show(memory, have) + " -> " + show(memory, *want));
  };

  auto wcpu = [](const Configuration &x) { return static_cast<std::uint64_t>(x.worker.cpus); };
  auto set_wcpu = [](Configuration &x, std::uint64_t v) { x.worker.cpus = static_cast<int>(v); };
  auto wmem = [](const Configuration &x) { return x.worker.mem_mb; };
  auto set_wmem = [](Configuration &x, std::uint64_t v) { x.worker.mem_mb = v; };
  auto scpu = [](const Configuration &x) { return static_cast<std::uint64_t>(x.server.cpus); };
  auto set_scpu = [](Configuration &x, std::uint64_t v) { x.server.cpus = static_cast<int>(v); };
  auto smem = [](const Configuration &x) { return x.server.mem_mb; };
  auto set_smem = [](Configuration &x, std::uint64_t v) { x.server.mem_mb = v; };

  apply(kDimCpusPerWorker, "workers", false, worker, wcpu, set_wcpu);
  apply(kDimMemPerWorker, "workers", true, worker, wmem, set_wmem);
  if (c.counts.servers > 0) {
    apply(kDimCpusPerServer, "parameter servers", false, server, scpu, set_scpu);
    apply(kDimMemPerServer, "parameter servers", true, server, smem, set_smem);
  }
  if (reasons.empty() || cur == c) return std::nullopt;
  Adjustment a;
  a.config = cur;
  for (const auto &r : reasons) a.reason += (a.reason.empty() ? "" : "; ") + r;
  return a;
}

}  // namespace autotune
