#include "autotune_config.h"

#include "autotune/dense.hpp"

#include <Eigen/Cholesky>
#include <vector>

#include "autotune/vector_math.hpp"
#include "cpu_variants.hpp"
#include "dense_loops.hpp"

#if HAVE_DENSE_AVX2
#include "dense_kernels.hpp"
#endif

namespace autotune {
namespace {

using In = Eigen::Ref<const Eigen::MatrixXd>;
using Out = Eigen::Ref<Eigen::MatrixXd>;
using Vec = Eigen::Ref<const Eigen::VectorXd>;

// The baseline: Eigen compiled with the rest of the engine.
void abt_baseline(const In &A, const In &B, Out C, double alpha, bool accumulate) {
  if (accumulate)
    C.noalias() += alpha * (A * B.transpose());
  else
    C.noalias() = alpha * (A * B.transpose());
}
void lower_bt_baseline(const In &L, const In &B, Out V) {
  V.noalias() = L.triangularView<Eigen::Lower>() * B.transpose();
}
void vtv_baseline(const In &V, Out C) { C.noalias() -= V.transpose() * V; }
void ata_baseline(const In &A, Out C) {
  C.selfadjointView<Eigen::Lower>().rankUpdate(A.transpose());
}
bool llt_baseline(Out A) {
  Eigen::LLT<Out, Eigen::Lower> llt(A);
  return llt.info() == Eigen::Success;
}
void inverse_baseline(const In &L, Out inv) { dense_loops::lower_inverse(L, inv); }
void matern_baseline(Out K, const Vec &na, const Vec &nb, double sf2) {
  dense_loops::matern52<Eigen::ArrayXd>(K, na, nb, sf2, exp_in_place);
}

#if HAVE_DENSE_AVX2
void abt_avx2(const In &A, const In &B, Out C, double alpha, bool accumulate) {
  dense_avx2::product_abt(A.rows(), B.rows(), A.cols(), A.data(), A.outerStride(), B.data(),
                          B.outerStride(), C.data(), C.outerStride(), alpha, accumulate);
}
void lower_bt_avx2(const In &L, const In &B, Out V) {
  dense_avx2::lower_times_bt(L.rows(), B.rows(), L.data(), L.outerStride(), B.data(),
                             B.outerStride(), V.data(), V.outerStride());
}
void vtv_avx2(const In &V, Out C) {
  dense_avx2::subtract_vtv(V.rows(), V.cols(), V.data(), V.outerStride(), C.data(), C.outerStride());
}
void ata_avx2(const In &A, Out C) {
  dense_avx2::add_ata_lower(A.rows(), A.cols(), A.data(), A.outerStride(), C.data(), C.outerStride());
}
bool llt_avx2(Out A) { return dense_avx2::cholesky_lower(A.rows(), A.data(), A.outerStride()); }
void inverse_avx2(const In &L, Out inv) {
  dense_avx2::lower_inverse(L.rows(), L.data(), L.outerStride(), inv.data(), inv.outerStride());
}
void matern_avx2(Out K, const Vec &na, const Vec &nb, double sf2) {
  dense_avx2::matern52_from_products(K.rows(), K.cols(), K.data(), K.outerStride(), na.data(), nb.data(),
                                     sf2, exp_in_place);
}
#endif

struct Variant {
  void (*abt)(const In &, const In &, Out, double, bool);
  void (*lower_bt)(const In &, const In &, Out);
  void (*vtv)(const In &, Out);
  void (*ata)(const In &, Out);
  bool (*llt)(Out);
  void (*inverse)(const In &, Out);
  void (*matern)(Out, const Vec &, const Vec &, double);
  const char *name;
};

// The variants this build and CPU have, fastest first.
std::vector<Variant> available() {
  std::vector<Variant> v;
#if HAVE_DENSE_AVX2
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    v.push_back({abt_avx2, lower_bt_avx2, vtv_avx2, ata_avx2, llt_avx2, inverse_avx2, matern_avx2, "avx2"});
#endif
  v.push_back({abt_baseline, lower_bt_baseline, vtv_baseline, ata_baseline, llt_baseline, inverse_baseline,
               matern_baseline, "baseline"});
  return v;
}

using Chosen = CpuVariants<Variant, available>;
Variant &current() { return Chosen::current(); }

}  // namespace

void product_abt(const In &A, const In &B, Out C, double alpha, bool accumulate) {
  current().abt(A, B, C, alpha, accumulate);
}

void lower_times_bt(const In &L, const In &B, Out V) { current().lower_bt(L, B, V); }

void subtract_vtv(const In &V, Out C) { current().vtv(V, C); }

void add_ata_lower(const In &A, Out C) { current().ata(A, C); }

bool cholesky_lower(Out A) { return current().llt(A); }

void lower_inverse(const In &L, Out inv) { current().inverse(L, inv); }

void matern52_from_products(Out K, const Vec &na, const Vec &nb, double sf2) {
  current().matern(K, na, nb, sf2);
}

const char *dense_variant() { return current().name; }

bool use_dense_variant(const char *name) {
  return Chosen::use(name);
}

}  // namespace autotune
