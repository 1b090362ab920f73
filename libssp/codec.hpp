// Byte encoding shared by the wire messages and the snapshot parts: a growing Writer, a bounds-
// checked Reader (Error(corrupt) on underrun), CRC-32 (IEEE 802.3: zlib's crc32) and the framing
// of snapshot parts:
//
//   "SSPP" | u8 version (1) | u8 kind | u16 0 | u64 payload bytes | u32 crc32(payload) | payload
//
// Values are stored in the host's byte order (all supported hosts are little-endian; the
// framing's magic would not match on another order).  Thread safety: none needed (values).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "ssp/error.hpp"

namespace ssp {

class Writer {
 public:
  template <class T>
  void put(const T &v) {
    static_assert(std::is_trivially_copyable<T>::value, "Writer::put needs a POD");
    buf_.append(reinterpret_cast<const char *>(&v), sizeof(T));
  }
  void put_bytes(const void *p, std::size_t n) { buf_.append(static_cast<const char *>(p), n); }
  void put_string(std::string_view s) {
    put<std::uint64_t>(s.size());
    buf_.append(s.data(), s.size());
  }
  std::string &buffer() { return buf_; }
  std::string take() { return std::move(buf_); }
  std::size_t size() const { return buf_.size(); }
  // Reserves n bytes at the end and returns where they start (valid until the next put).
  char *grow(std::size_t n) {
    buf_.resize(buf_.size() + n);
    return &buf_[buf_.size() - n];
  }

 private:
  std::string buf_;
};

class Reader {
 public:
  Reader(const char *p, std::size_t n, std::string what = "message")
      : p_(p), end_(p + n), what_(std::move(what)) {}
  explicit Reader(std::string_view s, std::string what = "message")
      : Reader(s.data(), s.size(), std::move(what)) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable<T>::value, "Reader::get needs a POD");
    T v;
    need(sizeof(T));
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  void get_bytes(void *out, std::size_t n) {
    need(n);
    std::memcpy(out, p_, n);
    p_ += n;
  }
  const char *skip(std::size_t n) {
    need(n);
    const char *q = p_;
    p_ += n;
    return q;
  }
  std::string get_string() {
    const auto n = get<std::uint64_t>();
    need(n);
    std::string s(p_, static_cast<std::size_t>(n));
    p_ += n;
    return s;
  }
  bool done() const { return p_ == end_; }
  std::size_t left() const { return static_cast<std::size_t>(end_ - p_); }

 private:
  void need(std::uint64_t n) const {
    if (n > static_cast<std::uint64_t>(end_ - p_))
      throw Error(Errc::corrupt, what_ + ": truncated (needs " + std::to_string(n) +
                                     " more bytes, has " + std::to_string(end_ - p_) + ")");
  }
  const char *p_;
  const char *end_;
  std::string what_;
};

std::uint32_t crc32(const void *data, std::size_t n, std::uint32_t crc = 0);

enum class PartKind : std::uint8_t {
  scheduler = 1,
  executor_queue = 2,
  executor_state = 3,
  shard = 4
};

// Frames `payload` as a snapshot part of `kind`.
std::string frame_part(PartKind kind, std::string_view payload);
// The same without copying the payload: begin_part() writes the header into an empty Writer, the
// caller appends the payload, finish_part() fills in its length and CRC and returns the part.
void begin_part(Writer &w, PartKind kind);
std::string finish_part(Writer &w);
// Checks the framing of a part called `name` and returns its payload; Error(corrupt) naming the
// part when the magic, kind, length or CRC do not match.
std::string unframe_part(PartKind kind, std::string_view bytes, const std::string &name);

}  // namespace ssp
