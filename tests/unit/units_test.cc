#include "autotune/units.hpp"

#include <gtest/gtest.h>

#include "autotune/error.hpp"

using namespace autotune;

TEST(Units, ParseSize) {
  EXPECT_EQ(parse_size("f", "512M"), 512ull << 20);
  EXPECT_EQ(parse_size("f", "2G"), 2ull << 30);
  EXPECT_EQ(parse_size("f", "2GiB"), 2ull << 30);
  EXPECT_EQ(parse_size("f", "2gb"), 2ull << 30);
  EXPECT_EQ(parse_size("f", "1.5G"), 3ull << 29);
  EXPECT_EQ(parse_size("f", "100"), 100ull << 20);
  EXPECT_EQ(parse_size("f", "100", 'B'), 100ull);
  EXPECT_EQ(parse_size("f", "0"), 0ull);
  EXPECT_EQ(parse_size("f", "4K"), 4096ull);
}

TEST(Units, ParseSizeRejects) {
  for (const char *bad : {"", "-1G", "abc", "12X", "1.5", "G", "1e30T", " 1G"}) {
    try {
      parse_size("Capacity", bad, 'B');
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), Errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("Capacity"), std::string::npos) << e.what();
    }
  }
}

TEST(Units, FormatSize) {
  EXPECT_EQ(format_size(512ull << 20), "512M");
  EXPECT_EQ(format_size(1ull << 30), "1G");
  EXPECT_EQ(format_size(1536ull << 20), "1536M");
  EXPECT_EQ(format_size(1000), "1000B");
  EXPECT_EQ(format_size(0), "0");
}

TEST(Units, Numbers) {
  EXPECT_DOUBLE_EQ(parse_double("g", "0.3", 0, 1), 0.3);
  EXPECT_THROW(parse_double("g", "1.5", 0, 1), Error);
  EXPECT_THROW(parse_double("g", "x", 0, 1), Error);
  EXPECT_THROW(parse_double("g", "0.3x", 0, 1), Error);
  EXPECT_THROW(parse_double("g", "nan", 0, 1), Error);
  EXPECT_EQ(parse_int("n", "12", 1, 100), 12);
  EXPECT_THROW(parse_int("n", "0", 1, 100), Error);
  EXPECT_THROW(parse_int("n", "1.5", 1, 100), Error);
  EXPECT_THROW(parse_int("n", "99999999999999999999", 1, 100), Error);
  try {
    parse_double("--autotune-gamma", "1.5", 0, 1);
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "--autotune-gamma: '1.5' is out of range; allowed: a number from 0 to 1");
  }
  EXPECT_TRUE(parse_bool("b", "Yes"));
  EXPECT_FALSE(parse_bool("b", "off"));
  EXPECT_THROW(parse_bool("b", "maybe"), Error);
  EXPECT_EQ(format_double(0.3), "0.3");
  EXPECT_EQ(format_double(1e-05), "1e-05");
  EXPECT_EQ(format_double(10), "10");
  EXPECT_EQ(format_double(-20), "-20");
  EXPECT_EQ(format_double(4294967296.0), "4294967296");
  try {
    parse_double("--bowl-mean", "11", 0, 10);
    ADD_FAILURE() << "accepted 11";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "--bowl-mean: '11' is out of range; allowed: a number from 0 to 10");
  }
}
