// The object record (internal): what a committed object is made of, as a small text file
// under <meta>/objects whose name is the key ('/' written as '%').  The same format describes a
// put's reservation under <meta>/pending while the data is being written.
//
//   autotune-tier-record 1
//   key ckpt/42/rank3
//   id 3f2a-18c4e0b1f2a3-7
//   size 12582912
//   created 1700000000123456789
//   piece pm 0 8388608 9c1e...(16 hex) pmem 0+4194304,8388608+4194304
//   piece ssd 8388608 4194304 51ab...(16 hex) file 3f2a-18c4e0b1f2a3-7.ssd
//   crc 0d3c...(16 hex)
//
// `crc` is XXH3-64 of every byte before its line: a torn or edited record is rejected as corrupt.
// Pieces are in offset order and cover [0, size) exactly; pmem extents are page-aligned, in the
// pool, and together span round_up(length, 4K).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace autotune {

struct Extent {
  std::uint64_t off = 0;
  std::uint64_t len = 0;
};

struct PieceRecord {
  std::string tier;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint64_t hash = 0;       // XXH3-64 of the piece's bytes
  std::vector<Extent> extents;  // pmem tier
  std::string file;             // disk tier: a name in <tier path>/data
};

struct ObjectRecord {
  std::string key;
  std::string id;  // unique per put; names the disk files and the reservation
  std::uint64_t size = 0;
  std::int64_t created_ns = 0;
  std::vector<PieceRecord> pieces;
};

std::string encode_record(const ObjectRecord &r);
// Throws Error(corrupt) "<what>: not a valid object record (...)" for anything that is not a
// well-formed record.
ObjectRecord decode_record(std::string_view text, const std::string &what);

// The digest of ObjectInfo::checksum.
std::uint64_t object_digest(const std::vector<PieceRecord> &pieces);

std::string key_to_filename(std::string_view key);
// nullopt for names that are not records (temporary files start with '.').
std::optional<std::string> filename_to_key(std::string_view name);

}  // namespace autotune
