#include "autotune_config.h"

#include "autotune/dense.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <cmath>
#include <string>
#include <vector>

#include "autotune/gp.hpp"
#include "autotune/rng.hpp"

using namespace autotune;

namespace {

// Restores the variant chosen at start-up when a test ends.
class Dense : public ::testing::Test {
 protected:
  void SetUp() override { chosen_ = dense_variant(); }
  void TearDown() override { use_dense_variant(chosen_.c_str()); }
  std::string chosen_;
};

// The variants this build and CPU have ("baseline" always).
std::vector<std::string> variants() {
  std::vector<std::string> v;
  const std::string chosen = dense_variant();
  for (const char *name : {"avx2", "baseline"})
    if (use_dense_variant(name)) v.push_back(name);
  use_dense_variant(chosen.c_str());
  return v;
}

Eigen::MatrixXd random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  Rng rng(seed, 1);
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = rng.uniform() - 0.5;
  return m;
}

// A symmetric positive definite n x n matrix, well conditioned.
Eigen::MatrixXd spd(Eigen::Index n, std::uint64_t seed) {
  const Eigen::MatrixXd a = random_matrix(n, n, seed);
  Eigen::MatrixXd k = a * a.transpose();
  k.diagonal().array() += static_cast<double>(n);
  return k;
}

// Relative to the largest entry of `want`: rounding differs between the variants (FMA, the order
// of the sums), nothing else may.
void expect_near(const Eigen::MatrixXd &got, const Eigen::MatrixXd &want, const std::string &what) {
  ASSERT_EQ(got.rows(), want.rows()) << what;
  ASSERT_EQ(got.cols(), want.cols()) << what;
  const double scale = std::max(1.0, want.cwiseAbs().maxCoeff());
  EXPECT_LE((got - want).cwiseAbs().maxCoeff(), 1e-12 * scale) << what;
}

}  // namespace

TEST_F(Dense, TheBaselineIsAlwaysThereAndAnUnknownVariantChangesNothing) {
  EXPECT_TRUE(use_dense_variant("baseline"));
  EXPECT_STREQ(dense_variant(), "baseline");
  EXPECT_FALSE(use_dense_variant("avx512"));
  EXPECT_STREQ(dense_variant(), "baseline");
#if defined(__x86_64__) && HAVE_DENSE_AVX2
  __builtin_cpu_init();
  EXPECT_EQ(use_dense_variant("avx2"), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
#endif
}

// Every product against Eigen's own expression, on the shapes of a proposal step (50 trials,
// candidates in blocks, a 160-candidate joint draw) and on blocks of larger matrices, whose
// columns are not contiguous (the leading dimension differs from the row count).
TEST_F(Dense, EveryVariantComputesWhatEigensExpressionsDo) {
  const Eigen::MatrixXd A = random_matrix(300, 9, 1), B = random_matrix(50, 9, 2);
  const Eigen::MatrixXd big = random_matrix(70, 90, 3);
  const auto Ab = big.block(3, 5, 40, 9), Bb = big.block(45, 20, 20, 9);
  const Eigen::MatrixXd L = spd(50, 4).llt().matrixL();
  const Eigen::MatrixXd Kt = random_matrix(256, 50, 5);
  const Eigen::MatrixXd V = random_matrix(50, 160, 6);
  const Eigen::MatrixXd C0 = random_matrix(160, 160, 7);
  Eigen::MatrixXd Lup = L;  // with garbage above the diagonal, which must not be read
  Lup.triangularView<Eigen::StrictlyUpper>().setConstant(7.0);
  for (const std::string &name : variants()) {
    ASSERT_TRUE(use_dense_variant(name.c_str()));
    Eigen::MatrixXd C(300, 50);
    product_abt(A, B, C);
    expect_near(C, A * B.transpose(), name + ": A B^T");
    const Eigen::MatrixXd before = C;
    product_abt(A, B, C, 0.25, true);
    expect_near(C, before + 0.25 * A * B.transpose(), name + ": C += 0.25 A B^T");
    Eigen::MatrixXd big_out = Eigen::MatrixXd::Zero(60, 60);
    product_abt(Ab, Bb, big_out.block(2, 3, 40, 20));
    expect_near(big_out.block(2, 3, 40, 20), Ab * Bb.transpose(), name + ": blocks");
    EXPECT_EQ(big_out.block(0, 0, 2, 60).cwiseAbs().maxCoeff(), 0.0) << name << ": wrote outside its block";

    Eigen::MatrixXd W(50, 256);
    lower_times_bt(Lup, Kt, W);
    expect_near(W, L * Kt.transpose(), name + ": L Kt^T");

    Eigen::MatrixXd Cs = C0;
    subtract_vtv(V, Cs);
    expect_near(Cs, C0 - V.transpose() * V, name + ": C - V^T V");

    Eigen::MatrixXd Kinv = Eigen::MatrixXd::Zero(50, 50);
    add_ata_lower(Lup.triangularView<Eigen::Lower>().toDenseMatrix(), Kinv);
    const Eigen::MatrixXd want = L.transpose() * L;
    expect_near(Eigen::MatrixXd(Kinv.triangularView<Eigen::Lower>()),
                Eigen::MatrixXd(want.triangularView<Eigen::Lower>()), name + ": lower of A^T A");

    Eigen::MatrixXd inv(50, 50);
    inv.setConstant(3.0);
    lower_inverse(Lup, inv);
    expect_near(inv, L.inverse(), name + ": L^-1");

    Eigen::MatrixXd K = spd(160, 8), K2 = K;
    ASSERT_TRUE(cholesky_lower(K)) << name;
    expect_near(Eigen::MatrixXd(K.triangularView<Eigen::Lower>()), Eigen::MatrixXd(K2.llt().matrixL()),
                name + ": Cholesky factor");
    Eigen::MatrixXd notpd = -Eigen::MatrixXd::Identity(5, 5);
    EXPECT_FALSE(cholesky_lower(notpd)) << name;
  }
}

TEST_F(Dense, TheMaternKernelFromProductsIsTheKernelOfTheDistances) {
  const Eigen::MatrixXd A = random_matrix(300, 6, 11), B = random_matrix(40, 6, 12);
  const Eigen::VectorXd na = A.rowwise().squaredNorm(), nb = B.rowwise().squaredNorm();
  Eigen::MatrixXd want(300, 40);
  for (Eigen::Index j = 0; j < 40; ++j)
    for (Eigen::Index i = 0; i < 300; ++i) {
      const double r = (A.row(i) - B.row(j)).norm(), s5 = std::sqrt(5.0);
      want(i, j) = 1.7 * (1 + s5 * r + 5.0 / 3.0 * r * r) * std::exp(-s5 * r);
    }
  for (const std::string &name : variants()) {
    ASSERT_TRUE(use_dense_variant(name.c_str()));
    Eigen::MatrixXd K(300, 40);
    product_abt(A, B, K);
    matern52_from_products(K, na, nb, 1.7);
    expect_near(K, want, name + ": Matern-5/2");
    // The same row twice: r^2 computed as |a|^2 + |b|^2 - 2 a.b may round below 0, which must
    // give M(0) = 1, not a NaN.
    Eigen::MatrixXd same(1, 1);
    const Eigen::MatrixXd a = A.topRows(1);
    const Eigen::VectorXd n1 = a.rowwise().squaredNorm();
    product_abt(a, a, same);
    same(0, 0) += 1e-15;
    matern52_from_products(same, n1, n1, 1.7);
    EXPECT_DOUBLE_EQ(same(0, 0), 1.7) << name;
  }
}

// A Gaussian process's fit and posterior through each variant: the same hyperparameters up to
// rounding, and the same predictions.
TEST_F(Dense, AFitAndItsPredictionsAgreeBetweenTheVariants) {
  const Eigen::MatrixXd X = (random_matrix(40, 4, 21).array() + 0.5).matrix();
  Eigen::VectorXd y(40);
  for (Eigen::Index i = 0; i < 40; ++i) y[i] = std::sin(3 * X(i, 0)) + X(i, 1) * X(i, 2) - X(i, 3);
  const Eigen::MatrixXd Xs = (random_matrix(500, 4, 22).array() + 0.5).matrix();
  std::vector<Eigen::VectorXd> means, vars;
  std::vector<double> lmls;
  const std::vector<std::string> names = variants();
  for (const std::string &name : names) {
    ASSERT_TRUE(use_dense_variant(name.c_str()));
    GpFitOptions o;
    o.seed = 5;
    const GaussianProcess gp = GaussianProcess::fit(X, y, {0, 1, 2, 3}, o);
    Eigen::VectorXd m, v;
    gp.predict(Xs, &m, &v);
    means.push_back(m);
    vars.push_back(v);
    lmls.push_back(gp.log_marginal_likelihood());
    // The posterior at the candidates (CandidatePosterior) is the prediction's.
    const CandidatePosterior post(gp, Xs, true);
    expect_near(post.mean(), m, name + ": posterior mean");
    expect_near(post.var(), v, name + ": posterior variance");
  }
  for (std::size_t k = 1; k < names.size(); ++k) {
    EXPECT_NEAR(lmls[k], lmls[0], 1e-6 * std::max(1.0, std::fabs(lmls[0]))) << names[k];
    EXPECT_LE((means[k] - means[0]).cwiseAbs().maxCoeff(), 1e-6) << names[k];
    EXPECT_LE((vars[k] - vars[0]).cwiseAbs().maxCoeff(), 1e-6) << names[k];
  }
}
