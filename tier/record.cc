#include "tier/record.hpp"

// The state on the stack needs the struct definition (same library version as the header).
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <cctype>
#include <charconv>
#include <cstdio>

#include "autotune/error.hpp"
#include "autotune/tier.hpp"
#include "autotune/tier_conf.hpp"

namespace autotune {
namespace {

constexpr std::string_view kMagic = "autotune-tier-record 1";

std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(sep, i);
    if (j == std::string_view::npos) j = s.size();
    out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

struct Parser {
  const std::string &what;
  [[noreturn]] void fail(const std::string &why) const {
    throw Error(Errc::corrupt, what + ": not a valid object record (" + why + ")");
  }
  std::uint64_t u64(std::string_view s, int base = 10) const {
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size())
      fail("'" + std::string(s) + "' is not a number");
    return v;
  }
  std::int64_t i64(std::string_view s) const {
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size())
      fail("'" + std::string(s) + "' is not a number");
    return v;
  }
};

bool safe_file_name(std::string_view n) {
  if (n.empty() || n.size() > 200 || n[0] == '.') return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return false;
  return true;
}

}  // namespace

std::string encode_record(const ObjectRecord &r) {
  std::string s(kMagic);
  s += "\nkey " + r.key + "\nid " + r.id + "\nsize " + std::to_string(r.size) + "\ncreated " +
       std::to_string(r.created_ns) + "\n";
  for (const PieceRecord &p : r.pieces) {
    s += "piece " + p.tier + " " + std::to_string(p.offset) + " " + std::to_string(p.length) + " " +
         hex16(p.hash);
    if (!p.file.empty()) {
      s += " file " + p.file;
    } else {
      s += " pmem ";
      for (size_t i = 0; i < p.extents.size(); ++i)
        s += (i ? "," : "") + std::to_string(p.extents[i].off) + "+" +
             std::to_string(p.extents[i].len);
    }
    s += "\n";
  }
  s += "crc " + hex16(XXH3_64bits(s.data(), s.size())) + "\n";
  return s;
}

ObjectRecord decode_record(std::string_view text, const std::string &what) {
  Parser P{what};
  const size_t crc_at = text.rfind("crc ");
  if (crc_at == std::string_view::npos || (crc_at > 0 && text[crc_at - 1] != '\n'))
    P.fail("no crc line");
  std::string_view crc_line = text.substr(crc_at + 4);
  if (crc_line.empty() || crc_line.back() != '\n') P.fail("truncated crc line");
  crc_line.remove_suffix(1);
  if (P.u64(crc_line, 16) != XXH3_64bits(text.data(), crc_at)) P.fail("its crc does not match");

  ObjectRecord r;
  auto lines = split(text.substr(0, crc_at), '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.empty() || lines[0] != kMagic) P.fail("bad header");
  bool have_key = false, have_id = false, have_size = false, have_created = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    auto f = split(lines[i], ' ');
    if (f[0] == "key" && f.size() == 2 && !have_key) {
      r.key = std::string(f[1]);
      have_key = true;
    } else if (f[0] == "id" && f.size() == 2 && !have_id) {
      if (!safe_file_name(f[1])) P.fail("bad id");
      r.id = std::string(f[1]);
      have_id = true;
    } else if (f[0] == "size" && f.size() == 2 && !have_size) {
      r.size = P.u64(f[1]);
      have_size = true;
    } else if (f[0] == "created" && f.size() == 2 && !have_created) {
      r.created_ns = P.i64(f[1]);
      have_created = true;
    } else if (f[0] == "piece" && f.size() == 7) {
      PieceRecord p;
      p.tier = std::string(f[1]);
      p.offset = P.u64(f[2]);
      p.length = P.u64(f[3]);
      p.hash = P.u64(f[4], 16);
      if (f[5] == "file") {
        if (!safe_file_name(f[6])) P.fail("bad file name");
        p.file = std::string(f[6]);
      } else if (f[5] == "pmem") {
        // Sums that would wrap around 2^64 are refused: the extents' total, the piece's length
        // rounded up to pages, and each extent's end (the store compares it with the pool's size).
        if (p.length > ~std::uint64_t{0} - (kTierPage - 1)) P.fail("extents do not span the piece");
        const std::uint64_t want = (p.length + kTierPage - 1) / kTierPage * kTierPage;
        std::uint64_t span = 0;
        for (auto e : split(f[6], ',')) {
          const size_t plus = e.find('+');
          if (plus == std::string_view::npos) P.fail("bad extent");
          Extent x{P.u64(e.substr(0, plus)), P.u64(e.substr(plus + 1))};
          if (x.len == 0 || x.off % kTierPage || x.len % kTierPage) P.fail("unaligned extent");
          if (x.len > ~std::uint64_t{0} - x.off) P.fail("an extent ends beyond 2^64");
          if (x.len > want - span) P.fail("extents do not span the piece");
          span += x.len;
          p.extents.push_back(x);
        }
        if (span != want) P.fail("extents do not span the piece");
      } else {
        P.fail("bad piece location");
      }
      r.pieces.push_back(std::move(p));
    } else {
      P.fail("unexpected line '" + std::string(lines[i].substr(0, 40)) + "'");
    }
  }
  if (!have_key || !have_id || !have_size || !have_created) P.fail("a field is missing");
  try {
    validate_tier_key(r.key);
  } catch (const Error &) {
    P.fail("bad key");
  }
  std::uint64_t at = 0;
  for (const PieceRecord &p : r.pieces) {
    // at <= size throughout, so a sum that would wrap around 2^64 is refused.
    if (p.offset != at || p.length == 0 || p.length > r.size - at) P.fail("pieces do not cover the object");
    at += p.length;
  }
  if (at != r.size) P.fail("pieces do not cover the object");
  return r;
}

std::uint64_t object_digest(const std::vector<PieceRecord> &pieces) {
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  for (const PieceRecord &p : pieces) {
    const std::uint64_t v[3] = {p.offset, p.length, p.hash};
    XXH3_64bits_update(&st, v, sizeof v);
  }
  return XXH3_64bits_digest(&st);
}

std::string key_to_filename(std::string_view key) {
  std::string s(key);
  for (char &c : s)
    if (c == '/') c = '%';
  return s;
}

std::optional<std::string> filename_to_key(std::string_view name) {
  if (name.empty() || name[0] == '.') return std::nullopt;
  std::string s(name);
  for (char &c : s)
    if (c == '%') c = '/';
  try {
    validate_tier_key(s);
  } catch (const Error &) {
    return std::nullopt;
  }
  return s;
}

}  // namespace autotune
