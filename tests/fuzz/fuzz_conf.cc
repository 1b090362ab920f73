// autotune.conf as every reader takes it: Conf::load_text (the tools and plugins: every section,
// unknown keys fail closed) and TierSiteConf::load_text (libssp and autotune-bb: the core and
// tier sections only).  Every Tier= line a load accepted is written back with format_tier_line()
// and must be read back unchanged, as tier_conf.hpp documents.
#include <string>

#include "autotune/conf.hpp"
#include "autotune/tier_conf.hpp"
#include "fuzz.hpp"

using namespace autotune;

namespace {

void check_tiers(const TierConf &t) {
  std::string text;
  for (const auto &s : t.tiers) text += format_tier_line(s) + "\n";
  TierSiteConf again;
  FUZZ_CHECK(!fuzz::refused([&] { again = TierSiteConf::load_text(text, "again"); }),
             "format_tier_line() output is refused: " + text);
  FUZZ_CHECK(again.tier.tiers.size() == t.tiers.size(), "tier count changed: " + text);
  for (std::size_t i = 0; i < t.tiers.size(); ++i) {
    const TierSpec &a = t.tiers[i], &b = again.tier.tiers[i];
    FUZZ_CHECK(a.name == b.name && a.kind == b.kind && a.path == b.path && a.capacity == b.capacity &&
                   a.bandwidth == b.bandwidth,
               "tier line does not round-trip: " + format_tier_line(a));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  Conf c;
  if (!fuzz::refused([&] { c = Conf::load_text(text, "autotune.conf"); })) check_tiers(c.tier);
  TierSiteConf t;
  if (!fuzz::refused([&] { t = TierSiteConf::load_text(text, "autotune.conf"); })) check_tiers(t.tier);
  return 0;
}
