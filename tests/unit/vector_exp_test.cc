#include "autotune/vector_exp.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace autotune;

namespace {

// Restores the variant chosen at start-up when a test ends.
class VectorExp : public ::testing::Test {
 protected:
  void SetUp() override { chosen_ = exp_variant(); }
  void TearDown() override { use_exp_variant(chosen_.c_str()); }
  std::string chosen_;
};

// Arguments from every range the kernel produces (-sqrt5 r for r from 0 to far beyond the last
// length scale, where exp underflows to 0) and a few beyond it.
std::vector<double> arguments() {
  std::vector<double> x = {0.0, -0.0, -1e-300, -1e-12, 1e-12, 1.0, 2.5, -745.2, -746.0, -800.0, 700.0};
  for (int i = 0; i <= 4000; ++i) x.push_back(-40.0 * i / 4000.0);
  return x;
}

}  // namespace

TEST_F(VectorExp, EveryVariantAgreesWithStdExpWithin4Ulp) {
  int tried = 0;
  for (const char *name : {"avx2", "sse", "scalar"}) {
    if (!use_exp_variant(name)) continue;
    ++tried;
    EXPECT_STREQ(exp_variant(), name);
    const std::vector<double> x = arguments();
    // Every length, so each variant's tail after its last full vector runs as well.
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3},
                          std::size_t{5}, std::size_t{7}, x.size()}) {
      std::vector<double> y(x.begin(), x.begin() + static_cast<long>(n));
      exp_in_place(y.data(), n);
      for (std::size_t i = 0; i < n; ++i) {
        const double want = std::exp(x[i]);
        const double ulp = want > 0 ? std::nextafter(want, 2 * want + 1) - want
                                    : std::numeric_limits<double>::denorm_min();
        EXPECT_LE(std::fabs(y[i] - want), 4 * ulp) << name << ": exp(" << x[i] << ")";
      }
    }
  }
  EXPECT_GE(tried, 1);
}

TEST_F(VectorExp, TheChosenVariantIsOneThisBuildHas) {
  const std::string chosen = exp_variant();
  EXPECT_TRUE(chosen == "avx2" || chosen == "sse" || chosen == "scalar") << chosen;
  EXPECT_TRUE(use_exp_variant("scalar"));
  EXPECT_FALSE(use_exp_variant("avx512"));
  EXPECT_STREQ(exp_variant(), "scalar");  // an unknown name changes nothing
  EXPECT_TRUE(use_exp_variant(chosen.c_str()));
}
