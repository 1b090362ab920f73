#include "codec.hpp"

#include <zlib.h>

namespace ssp {
namespace {

constexpr char kMagic[4] = {'S', 'S', 'P', 'P'};
constexpr std::uint8_t kVersion = 1;
constexpr std::size_t kHeader = 4 + 1 + 1 + 2 + 8 + 4;

}  // namespace

std::uint32_t crc32(const void *data, std::size_t n, std::uint32_t crc) {
  return static_cast<std::uint32_t>(
      ::crc32_z(crc, static_cast<const Bytef *>(data), static_cast<z_size_t>(n)));
}

void begin_part(Writer &w, PartKind kind) {
  if (w.size() != 0) throw Error(Errc::internal, "begin_part: the writer is not empty");
  w.put_bytes(kMagic, 4);
  w.put<std::uint8_t>(kVersion);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(kind));
  w.put<std::uint16_t>(0);
  w.put<std::uint64_t>(0);  // payload length
  w.put<std::uint32_t>(0);  // CRC-32 of the payload
}

std::string finish_part(Writer &w) {
  std::string &b = w.buffer();
  if (b.size() < kHeader) throw Error(Errc::internal, "finish_part: no part begun");
  const std::uint64_t len = b.size() - kHeader;
  const std::uint32_t crc = crc32(b.data() + kHeader, len);
  std::memcpy(&b[kHeader - 12], &len, sizeof len);
  std::memcpy(&b[kHeader - 4], &crc, sizeof crc);
  return w.take();
}

std::string frame_part(PartKind kind, std::string_view payload) {
  Writer w;
  w.buffer().reserve(kHeader + payload.size());
  begin_part(w, kind);
  w.put_bytes(payload.data(), payload.size());
  return finish_part(w);
}

std::string unframe_part(PartKind kind, std::string_view bytes, const std::string &name) {
  const std::string what = "snapshot part '" + name + "'";
  if (bytes.size() < kHeader || std::memcmp(bytes.data(), kMagic, 4) != 0)
    throw Error(Errc::corrupt, what + ": not a libssp snapshot part (bad magic)");
  Reader r(bytes, what);
  r.skip(4);
  const auto version = r.get<std::uint8_t>();
  const auto k = r.get<std::uint8_t>();
  r.get<std::uint16_t>();
  const auto len = r.get<std::uint64_t>();
  const auto crc = r.get<std::uint32_t>();
  if (version != kVersion)
    throw Error(Errc::corrupt, what + ": format version " + std::to_string(version) +
                                   " is not supported (this library reads version 1)");
  if (k != static_cast<std::uint8_t>(kind))
    throw Error(Errc::corrupt, what + ": holds part kind " + std::to_string(k) + ", expected " +
                                   std::to_string(static_cast<int>(kind)));
  if (len != r.left())
    throw Error(Errc::corrupt, what + ": length " + std::to_string(len) + " does not match the " +
                                   std::to_string(r.left()) + " payload bytes (torn write?)");
  const char *p = r.skip(len);
  if (crc32(p, len) != crc) throw Error(Errc::corrupt, what + ": checksum mismatch");
  return std::string(p, len);
}

}  // namespace ssp
