// The replay CSV (`autotune replay FILE`): Table::parse_csv, which Table::read_csv calls on the
// file's text.  Every row the parser accepts has as many cells as the header.
#include "autotune/table.hpp"
#include "fuzz.hpp"

using namespace autotune;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  Table t;
  if (fuzz::refused([&] { t = Table::parse_csv(fuzz::as_text(data, size), "fuzz.csv"); })) return 0;
  for (std::size_t r = 0; r < t.rows(); ++r) {
    for (std::size_t c = 0; c < t.header().size(); ++c) (void)t.cell(r, c).size();
    (void)t.where(r);
  }
  if (!t.header().empty()) {
    FUZZ_CHECK(t.find(t.header()[0]).has_value(), "a header column is not found");
    fuzz::refused([&] { (void)t.column("no such column", "--fuzz"); });
  }
  return 0;
}
