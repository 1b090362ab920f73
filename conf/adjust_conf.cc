#include "autotune/adjust_conf.hpp"

#include "autotune/error.hpp"
#include "autotune/raw_conf.hpp"
#include "autotune/units.hpp"

namespace autotune {

void parse_adjust_section(RawConf &raw, AdjustConf &out) {
  std::string where = "autotune.conf";
  if (auto l = raw.take_line("AdjustTrials")) {
    out.trials =
        static_cast<int>(parse_int(l->where() + ": AdjustTrials", l->tokens[0].value, 0, 1000));
  }
  auto fraction = [&](const char *key, double lo, double *dst) {
    if (auto l = raw.take_line(key)) {
      *dst = parse_double(l->where() + ": " + key, l->tokens[0].value, lo, 1);
      where = l->where();
    }
  };
  fraction("AdjustCpuIdle", 0, &out.cpu_idle);
  fraction("AdjustCpuTarget", 0.01, &out.cpu_target);
  fraction("AdjustMemHigh", 0.01, &out.mem_high);
  fraction("AdjustMemLow", 0, &out.mem_low);
  if (out.cpu_idle >= out.cpu_target)
    throw_invalid(where + ": AdjustCpuIdle " + format_double(out.cpu_idle) +
                  " must be below AdjustCpuTarget " + format_double(out.cpu_target));
  if (out.mem_low >= out.mem_high)
    throw_invalid(where + ": AdjustMemLow " + format_double(out.mem_low) +
                  " must be below AdjustMemHigh " + format_double(out.mem_high));
}

}  // namespace autotune
