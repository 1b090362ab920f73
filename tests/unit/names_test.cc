#include "autotune/names.hpp"

#include <gtest/gtest.h>

#include <string>

#include "autotune/error.hpp"

using autotune::Errc;
using autotune::Error;
using autotune::validate_class_name;

TEST(ClassName, AcceptsAllowedCharacters) {
  EXPECT_NO_THROW(validate_class_name("mnist-logreg"));
  EXPECT_NO_THROW(validate_class_name("A.b_c-9"));
  EXPECT_NO_THROW(validate_class_name(std::string(64, 'x')));
}

struct BadName {
  std::string name;
  std::string expected_fragment;
};

class ClassNameRejects : public ::testing::TestWithParam<BadName> {};

TEST_P(ClassNameRejects, WithMessageNamingTheProblem) {
  try {
    validate_class_name(GetParam().name);
    FAIL() << "accepted '" << GetParam().name << "'";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("--autotune"), std::string::npos) << msg;
    EXPECT_NE(msg.find(GetParam().expected_fragment), std::string::npos) << msg;
    EXPECT_NE(msg.find("allowed: 1-64 characters"), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, ClassNameRejects,
    ::testing::Values(BadName{"", "empty"}, BadName{std::string(65, 'x'), "65 characters"},
                      BadName{"a b", "contains a space"}, BadName{"a;b", "contains ';'"},
                      BadName{"a/b", "contains '/'"}, BadName{"caf\xc3\xa9", "contains"},
                      BadName{"a\nb", "control character"}));
