#include "codec.hpp"

#include <array>

namespace ssp {
namespace {

constexpr char kMagic[4] = {'S', 'S', 'P', 'P'};
constexpr std::uint8_t kVersion = 1;
constexpr std::size_t kHeader = 4 + 1 + 1 + 2 + 8 + 4;

std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}

}  // namespace

std::uint32_t crc32(const void *data, std::size_t n, std::uint32_t crc) {
  static const auto table = make_table();
  const auto *p = static_cast<const unsigned char *>(data);
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
  return ~crc;
}

std::string frame_part(PartKind kind, std::string_view payload) {
  Writer w;
  w.put_bytes(kMagic, 4);
  w.put<std::uint8_t>(kVersion);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(kind));
  w.put<std::uint16_t>(0);
  w.put<std::uint64_t>(payload.size());
  w.put<std::uint32_t>(crc32(payload.data(), payload.size()));
  w.put_bytes(payload.data(), payload.size());
  return w.take();
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
