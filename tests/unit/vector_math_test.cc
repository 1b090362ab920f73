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

// The distance from |v| to the next double above it.
double ulp(double v) {
  const double a = std::fabs(v);
  return a > 0 ? std::nextafter(a, std::numeric_limits<double>::infinity()) - a
               : std::numeric_limits<double>::denorm_min();
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
double std_log(double x) { return std::log(x); }
double std_cos(double x) { return std::cos(x); }

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

TEST_F(VectorMath, EveryVariantsLogAndCosAgreeWithStdWithin4Ulp) {
  // Box-Muller's arguments: 1 - u for u uniform in [0, 1) (so (0, 1]), and 2 pi u.
  std::vector<double> x = {1.0, 0x1.0p-53, 1e-300, 0.5, 1.5, 1e300};
  for (int i = 1; i <= 4000; ++i) x.push_back(i / 4000.0);
  expect_within_4_ulp(log_in_place, std_log, x, "log");
  std::vector<double> c = {0.0, -0.0, 1e-300, 3.141592653589793, 6.283185307179586, 100.0};
  for (int i = 0; i < 4000; ++i) c.push_back(6.283185307179586 * i / 4000.0);
  expect_within_4_ulp(cos_in_place, std_cos, c, "cos");
}

TEST_F(VectorMath, FillNormalDrawsWhatRngNormalDraws) {
  // The same draws as one rng.normal() call each, and the generator left in the same state, for
  // every variant and for lengths across its blocks (256 draws).
  for (const char *name : {"avx2", "sse", "scalar"}) {
    if (!use_vector_math_variant(name)) continue;
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{255},
                          std::size_t{256}, std::size_t{700}}) {
      Rng a(42, 7), b(42, 7);
      std::vector<double> z(n + 1, 99.0);
      fill_normal(a, z.data(), n);
      for (std::size_t i = 0; i < n; ++i) {
        const double want = b.normal();
        EXPECT_NEAR(z[i], want, 1e-12 * (1 + std::fabs(want)))
            << name << ", draw " << i << " of " << n;
      }
      EXPECT_EQ(z[n], 99.0) << name << ": nothing written past n";
      EXPECT_EQ(a.next(), b.next()) << name << ", n = " << n;
    }
  }
}

TEST_F(VectorMath, TheChosenVariantIsOneThisBuildHas) {
  const std::string chosen = vector_math_variant();
  EXPECT_TRUE(chosen == "avx2" || chosen == "sse" || chosen == "scalar") << chosen;
  EXPECT_TRUE(use_vector_math_variant("scalar"));
  EXPECT_FALSE(use_vector_math_variant("avx512"));
  EXPECT_STREQ(vector_math_variant(), "scalar");  // an unknown name changes nothing
  EXPECT_TRUE(use_vector_math_variant(chosen.c_str()));
}
