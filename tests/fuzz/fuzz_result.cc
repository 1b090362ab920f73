// The result files a job leaves for ingest (untrusted: written by the job's user):
// parse_result() for StateDir/incoming/<job>.json and <job>.<n>.json (autotune-run/1, wrapping
// libssp's autotune-result/1), parse_search_summary() for <job>.search.json.  read_result_file()
// and read_search_file() check the file (owner, size, type) and call these on its text.  Also the
// helpers' per-rank reports autotune-run merges (parse_rank_report, rank_report.hpp), and the merge
// of what was accepted read back by parse_result.  And the spool's job ends (parse_job_end,
// journal.hpp: written by slurmctld's prep/autotune, read back by ingest), which must read back
// what they format.
#include <nlohmann/json.hpp>

#include "autotune/journal.hpp"
#include "autotune/rank_report.hpp"
#include "autotune/result.hpp"
#include "fuzz.hpp"

using namespace autotune;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  if (size > kMaxResultBytes) return -1;  // read_*_file() refuses larger files before parsing
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::refused([&] { (void)parse_result(text); });
  fuzz::refused([&] { (void)parse_search_summary(text); });
  if (size <= kMaxRankReportBytes)
    fuzz::refused([&] {
      const RankReport r = parse_rank_report(text);
      const nlohmann::json app = nlohmann::json::parse(merge_rank_reports({r}));
      const nlohmann::json doc = {{"format", "autotune-run/1"}, {"status", "ok"}, {"wall_s", 1.0}, {"app", app}};
      (void)parse_result(doc.dump());  // what autotune-run merged, ingest must accept
    });
  fuzz::refused([&] {
    const JobEnd e = parse_job_end(std::string(text), "spool/x.end");
    const JobEnd back = parse_job_end(format_job_end(e), "spool/x.end");
    if (back.job_id != e.job_id || back.uid != e.uid || back.state != e.state || back.nodes != e.nodes ||
        back.admin_comment != e.admin_comment || back.submit != e.submit || back.start != e.start)
      __builtin_trap();
  });
  return 0;
}
