// Snapshot encoding (framing, CRC) and the directory snapshot store (no MPI).
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>

#include "codec.hpp"
#include "ssp/snapshot.hpp"

namespace {

TEST(SspCodec, Crc32MatchesTheStandardCheckValue) {
  EXPECT_EQ(ssp::crc32("123456789", 9), 0xCBF43926u);
}

TEST(SspCodec, Crc32ChainsAndFramingInPlaceEqualsFramingACopy) {
  EXPECT_EQ(ssp::crc32("6789", 4, ssp::crc32("12345", 5)), 0xCBF43926u);
  ssp::Writer w;
  ssp::begin_part(w, ssp::PartKind::executor_state);
  w.put_string("state");
  w.put<std::int64_t>(7);
  ssp::Writer p;
  p.put_string("state");
  p.put<std::int64_t>(7);
  EXPECT_EQ(ssp::finish_part(w), ssp::frame_part(ssp::PartKind::executor_state, p.buffer()));
}

TEST(SspCodec, WriterAndReaderRoundTrip) {
  ssp::Writer w;
  w.put<std::int64_t>(-5);
  w.put<double>(2.5);
  w.put_string("hello");
  const std::string b = w.take();
  ssp::Reader r(b);
  EXPECT_EQ(r.get<std::int64_t>(), -5);
  EXPECT_EQ(r.get<double>(), 2.5);
  EXPECT_EQ(r.get_string(), "hello");
  EXPECT_TRUE(r.done());
  EXPECT_THROW(r.get<std::uint8_t>(), ssp::Error);
}

TEST(SspCodec, PartsRoundTripAndDamageIsDetected) {
  const std::string payload(1000, 'x');
  const std::string part = ssp::frame_part(ssp::PartKind::shard, payload);
  EXPECT_EQ(ssp::unframe_part(ssp::PartKind::shard, part, "p"), payload);
  auto code_of = [](const std::string &bytes, ssp::PartKind k) {
    try {
      ssp::unframe_part(k, bytes, "c000000000001.table-w.shard-3");
    } catch (const ssp::Error &e) {
      EXPECT_NE(std::string(e.what()).find("c000000000001.table-w.shard-3"), std::string::npos);
      return e.code();
    }
    return ssp::Errc::internal;
  };
  std::string flipped = part;
  flipped[flipped.size() - 10] ^= 1;
  EXPECT_EQ(code_of(flipped, ssp::PartKind::shard), ssp::Errc::corrupt);  // CRC
  EXPECT_EQ(code_of(part.substr(0, part.size() - 1), ssp::PartKind::shard),
            ssp::Errc::corrupt);                                            // torn
  EXPECT_EQ(code_of(part, ssp::PartKind::scheduler), ssp::Errc::corrupt);   // wrong kind
  EXPECT_EQ(code_of("garbage", ssp::PartKind::shard), ssp::Errc::corrupt);  // magic
}

class SspDirectoryStore : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ssp-store-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { ASSERT_EQ(std::system(("rm -rf '" + dir_ + "'").c_str()), 0); }
  std::string dir_;
};

TEST_F(SspDirectoryStore, PutGetListRemove) {
  ssp::DirectorySnapshotStore s(dir_ + "/snap");
  s.put("c000000000004.manifest", "{}");
  s.put("latest", "c000000000004\n");
  s.put("latest", "c000000000008\n");  // replaced atomically
  EXPECT_EQ(s.get("latest"), "c000000000008\n");
  EXPECT_EQ(s.list(), (std::vector<std::string>{"c000000000004.manifest", "latest"}));
  s.remove("c000000000004.manifest");
  s.remove("c000000000004.manifest");  // absent: no error
  EXPECT_EQ(s.list(), (std::vector<std::string>{"latest"}));
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/snap").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(SspDirectoryStore, MissingObjectsAndBadNamesAreNamedErrors) {
  ssp::DirectorySnapshotStore s(dir_);
  try {
    s.get("latest");
    FAIL() << "no error";
  } catch (const ssp::Error &e) {
    EXPECT_EQ(e.code(), ssp::Errc::not_found);
  }
  for (const char *bad : {"", "../x", "a/b", ".hidden", "sp ace"}) {
    try {
      s.put(bad, "x");
      FAIL() << "accepted '" << bad << "'";
    } catch (const ssp::Error &e) {
      EXPECT_EQ(e.code(), ssp::Errc::invalid_argument);
    }
  }
  std::ofstream(dir_ + "/file") << "x";
  EXPECT_THROW(ssp::DirectorySnapshotStore(dir_ + "/file"), ssp::Error);
}

}  // namespace
