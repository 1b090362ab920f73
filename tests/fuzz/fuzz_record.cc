// The tier store's on-media object records (tier/record.hpp): decode_record() reads every file
// under <meta>/objects and <meta>/pending when a store opens, and a job's buffer is the job
// user's to write.  The record's last line is an XXH3 checksum of the rest; each input is tried
// as given and with its checksum line computed, so the fuzzer reaches the fields behind it.
// What decode_record() accepts must hold what record.hpp promises (pieces in order covering
// [0, size) exactly, pmem extents page-aligned spanning round_up(length, 4K), no sum wrapping
// around 2^64) and survive encode_record() unchanged.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cinttypes>
#include <cstdio>

#include "autotune/tier_conf.hpp"
#include "fuzz.hpp"
#include "tier/record.hpp"

using namespace autotune;

namespace {

bool same(const ObjectRecord &a, const ObjectRecord &b) {
  if (a.key != b.key || a.id != b.id || a.size != b.size || a.created_ns != b.created_ns ||
      a.pieces.size() != b.pieces.size())
    return false;
  for (std::size_t i = 0; i < a.pieces.size(); ++i) {
    const PieceRecord &p = a.pieces[i], &q = b.pieces[i];
    if (p.tier != q.tier || p.offset != q.offset || p.length != q.length || p.hash != q.hash ||
        p.file != q.file || p.extents.size() != q.extents.size())
      return false;
    for (std::size_t j = 0; j < p.extents.size(); ++j)
      if (p.extents[j].off != q.extents[j].off || p.extents[j].len != q.extents[j].len) return false;
  }
  return true;
}

void check(const ObjectRecord &r) {
  // Pieces cover [0, size) exactly, in order, each non-empty (no wrap-around of 64-bit sums).
  std::uint64_t at = 0;
  for (const PieceRecord &p : r.pieces) {
    FUZZ_CHECK(p.offset == at && p.length > 0 && p.length <= r.size && p.offset <= r.size - p.length,
               "a piece outside [0, size) is accepted");
    at = p.offset + p.length;
    if (p.file.empty()) {
      // Extents: page-aligned, their total exactly round_up(length, 4K), computed without overflow.
      unsigned __int128 span = 0;
      for (const Extent &e : p.extents) {
        FUZZ_CHECK(e.len > 0 && e.off % kTierPage == 0 && e.len % kTierPage == 0, "an unaligned extent is accepted");
        FUZZ_CHECK(e.len <= ~std::uint64_t{0} - e.off, "an extent whose end wraps around 2^64 is accepted");
        span += e.len;
      }
      const unsigned __int128 want = (static_cast<unsigned __int128>(p.length) + kTierPage - 1) / kTierPage * kTierPage;
      FUZZ_CHECK(span == want, "extents that do not span round_up(length, 4K) are accepted");
    }
  }
  FUZZ_CHECK(at == r.size, "pieces that do not cover the object are accepted");
  // encode_record(decode_record(x)) decodes to the same record.
  const std::string again = encode_record(r);
  ObjectRecord r2;
  FUZZ_CHECK(!fuzz::refused([&] { r2 = decode_record(again, "again"); }), "an encoded record is refused:\n" + again);
  FUZZ_CHECK(same(r, r2), "a record does not round-trip:\n" + again);
}

void decode(std::string_view text) {
  ObjectRecord r;
  if (!fuzz::refused([&] { r = decode_record(text, "objects/fuzz"); })) check(r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  decode(text);
  // The same body with a matching checksum line.
  std::string body(text.substr(0, text.rfind("crc ") == std::string_view::npos ? text.size() : text.rfind("crc ")));
  if (body.empty() || body.back() != '\n') body += '\n';
  char crc[40];
  std::snprintf(crc, sizeof crc, "crc %016" PRIx64 "\n", static_cast<std::uint64_t>(XXH3_64bits(body.data(), body.size())));
  decode(body + crc);
  // The file names of records (key_to_filename's inverse), from the first line.
  const std::string first(text.substr(0, text.find('\n')));
  if (auto key = filename_to_key(first))
    FUZZ_CHECK(filename_to_key(key_to_filename(*key)) == key, "a record file name does not round-trip: " + first);
  return 0;
}
