// The manifest of a snapshot and the checks that make a snapshot trusted only through it.
//
// Every part of a snapshot (scheduler, executor queues and states, table shards) is written by
// the rank that owns it; rank 0 then writes the manifest, which lists each part's name, size and
// the CRC-32 of its payload (format "ssp-snapshot/2"), and last the object `latest`.  A part is
// loaded only when it is listed in the manifest, present, of the listed size, and its frame's
// CRC-32 is the listed one and matches its payload (codec.hpp).  A part that is missing, torn,
// damaged or left over from another snapshot is reported as an Error naming it, never loaded.
//
// The CRC comes from the part's own frame header (frame_part computed it), so recording it costs
// nothing; since it describes the bytes, not where they are kept, a snapshot stays verifiable
// after it is copied to another store (e.g. staged out of a burst buffer into a directory).
//
// Manifests of format "ssp-snapshot/1" (no part list) are still read; their parts are checked by
// their frames only.  Thread safety: none needed (values); SnapshotReader calls only const
// members of the store.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "codec.hpp"
#include "ssp/snapshot.hpp"

namespace ssp {

inline constexpr const char *kManifestFormat = "ssp-snapshot/2";

// A part's name, its size in bytes (framed) and the CRC-32 of its payload.
struct PartSum {
  std::string name;
  std::uint64_t bytes = 0;
  std::uint32_t crc = 0;
};

// The sum of a framed part (the CRC is read from the frame header, not recomputed).  Throws
// Error(internal) when `framed` is not a frame.
PartSum part_sum(std::string name, std::string_view framed);

// A list of sums in a message, and back.
void put_sums(Writer &w, const std::vector<PartSum> &sums);
std::vector<PartSum> get_sums(Reader &r);

// The manifest's "parts" array: [{"name", "bytes", "crc32" (8 hex digits)}] sorted by name.
nlohmann::json sums_to_json(std::vector<PartSum> sums);

// The whole number `key` of the JSON object `o` (of snapshot manifest `mname`) as T.  Throws
// Error(corrupt) naming the field unless it is a JSON integer in T's range (nlohmann's get<T>()
// converts a fraction, or a number out of range, unchecked: a float out of an integer's range
// is undefined behaviour); nlohmann's exceptions when `key` is missing.
template <class T>
T manifest_int(const nlohmann::json &o, const char *key, const std::string &mname) {
  static_assert(std::numeric_limits<T>::is_integer, "manifest_int reads integers");
  const nlohmann::json &v = o.at(key);
  constexpr auto hi = static_cast<std::uint64_t>(std::numeric_limits<T>::max());
  constexpr auto lo = static_cast<std::int64_t>(std::numeric_limits<T>::min());
  if (v.is_number_unsigned() && v.get<std::uint64_t>() <= hi)
    return static_cast<T>(v.get<std::uint64_t>());
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    const auto x = v.get<std::int64_t>();
    if (x >= lo && (x < 0 || static_cast<std::uint64_t>(x) <= hi)) return static_cast<T>(x);
  }
  throw Error(Errc::corrupt, "snapshot manifest '" + mname + "': " + key + ": '" + v.dump() +
                                 "' is not a whole number from " + std::to_string(lo) + " to " +
                                 std::to_string(hi));
}

// The snapshot named by `latest` (or by `id`) of a store, read through its manifest.
class SnapshotReader {
 public:
  // Reads `latest` when `id` is empty, then the manifest.  Throws Error(not_found) when the store
  // has no `latest` or no such manifest, Error(corrupt) when either cannot be parsed, names no
  // valid id, or has an unknown format.
  explicit SnapshotReader(const SnapshotStore &store, std::string id = "");

  const std::string &id() const { return id_; }
  std::string manifest_name() const { return id_ + ".manifest"; }
  const nlohmann::json &manifest() const { return man_; }
  // True when the manifest lists its parts (format 2).
  bool listed() const { return listed_; }
  const std::vector<PartSum> &parts() const { return parts_; }

  // Throws Error(not_found) naming the first listed part the store does not have.
  void check_present() const;
  // Fetches part `name`, checks it against the manifest and its frame, returns its payload.
  // Error(not_found) when missing, Error(corrupt) when it does not match (each naming the part).
  std::string part(const std::string &name, PartKind kind) const;
  // Fetches and checks every listed part (kinds from their names); returns their total bytes.
  std::uint64_t check_all() const;

 private:
  const SnapshotStore &store_;
  std::string id_;
  nlohmann::json man_;
  bool listed_ = false;
  std::vector<PartSum> parts_;  // sorted by name
};

// The kind of part a snapshot object name denotes ("<id>.scheduler", "<id>.executor-<e>.queue",
// ...); false when the name is not a part's.
bool part_kind_of(const std::string &name, PartKind *kind);

}  // namespace ssp
