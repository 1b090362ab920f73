#include "autotune/vector_math.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace autotune;

namespace {

// Restores the variant chosen at start-up when a test ends.
class VectorMath : public ::testing::Test {
 protected:
  void SetUp() override { chosen_ = vector_math_variant(); }
  void TearDown() override { use_vector_math_variant(chosen_.c_str()); }
  std::string chosen_;
};

double ulp(double v) {
  return v > 0 ? std::nextafter(v, 2 * v + 1) - v : std::numeric_limits<double>::denorm_min();
}

// Each variant against the scalar function on `x`, for every length up to a few vectors and the
// whole array (so each variant's tail after its last full vector runs as well).
void expect_within_4_ulp(void (*f)(double *, std::size_t), double (*want)(double),
                         const std::vector<double> &x, const char *what) {
  int tried = 0;
  for (const char *name : {"avx2", "sse", "scalar"}) {
    if (!use_vector_math_variant(name)) continue;
    ++tried;
    EXPECT_STREQ(vector_math_variant(), name);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3},
                          std::size_t{5}, std::size_t{7}, x.size()}) {
      std::vector<double> y(x.begin(), x.begin() + static_cast<long>(n));
      f(y.data(), n);
      for (std::size_t i = 0; i < n; ++i) {
        const double w = want(x[i]);
        EXPECT_LE(std::fabs(y[i] - w), 4 * ulp(w)) << name << ": " << what << "(" << x[i] << ")";
      }
    }
  }
  EXPECT_GE(tried, 1);
}

double std_exp(double x) { return std::exp(x); }
double std_erfc(double x) { return std::erfc(x); }

}  // namespace

TEST_F(VectorMath, EveryVariantsExpAgreesWithStdExpWithin4Ulp) {
  // -sqrt5 r for r from 0 to far beyond the last length scale, where exp underflows, and a few
  // arguments beyond that range.
  std::vector<double> x = {0.0, -0.0, -1e-300, -1e-12, 1e-12, 1.0, 2.5, -745.2, -746.0, -800.0, 700.0};
  for (int i = 0; i <= 4000; ++i) x.push_back(-40.0 * i / 4000.0);
  expect_within_4_ulp(exp_in_place, std_exp, x, "exp");
}

TEST_F(VectorMath, EveryVariantsErfcAgreesWithStdErfcWithin4Ulp) {
  // -z / sqrt2 for the z of expected improvement: far in both tails (erfc -> 2 and -> 0).
  std::vector<double> x = {0.0, -0.0, 1e-300, -1e-12, 26.5, 27.3, 30.0, -6.0, -30.0};
  for (int i = 0; i <= 4000; ++i) x.push_back(-10.0 + 40.0 * i / 4000.0);
  expect_within_4_ulp(erfc_in_place, std_erfc, x, "erfc");
}

TEST_F(VectorMath, TheChosenVariantIsOneThisBuildHas) {
  const std::string chosen = vector_math_variant();
  EXPECT_TRUE(chosen == "avx2" || chosen == "sse" || chosen == "scalar") << chosen;
  EXPECT_TRUE(use_vector_math_variant("scalar"));
  EXPECT_FALSE(use_vector_math_variant("avx512"));
  EXPECT_STREQ(vector_math_variant(), "scalar");  // an unknown name changes nothing
  EXPECT_TRUE(use_vector_math_variant(chosen.c_str()));
}
