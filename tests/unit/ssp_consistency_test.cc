// The consistency policies and vector clocks of libssp (no MPI).
#include <gtest/gtest.h>

#include "ssp/consistency.hpp"
#include "ssp/error.hpp"

namespace {

using ssp::ConsistencyPolicy;

TEST(SspConsistency, NamesAndModels) {
  EXPECT_EQ(ConsistencyPolicy::from_staleness(0).name(), "BSP");
  EXPECT_EQ(ConsistencyPolicy::from_staleness(3).name(), "SSP(3)");
  EXPECT_EQ(ConsistencyPolicy::from_staleness(ssp::kAsync).name(), "ASP");
  EXPECT_EQ(ConsistencyPolicy::bsp().model(), ConsistencyPolicy::Model::bsp);
  EXPECT_EQ(ConsistencyPolicy::asp().model(), ConsistencyPolicy::Model::asp);
}

TEST(SspConsistency, NegativeStalenessIsRejectedWithTheValue) {
  try {
    ConsistencyPolicy::from_staleness(-2);
    FAIL() << "no error";
  } catch (const ssp::Error &e) {
    EXPECT_EQ(e.code(), ssp::Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("staleness: '-2' is out of range"), std::string::npos)
        << e.what();
  }
}

TEST(SspConsistency, RequiredMinimumClockIsCMinusS) {
  EXPECT_EQ(ConsistencyPolicy::bsp().required_min_clock(10), 10);
  EXPECT_EQ(ConsistencyPolicy::from_staleness(2).required_min_clock(10), 8);
  EXPECT_LT(ConsistencyPolicy::asp().required_min_clock(10), -1000000);
}

TEST(SspConsistency, AWorkerMoreThanSAheadMayNotProceed) {
  const auto p = ConsistencyPolicy::from_staleness(2);
  EXPECT_TRUE(p.may_proceed(10, 8));   // 2 ahead: allowed
  EXPECT_FALSE(p.may_proceed(10, 7));  // 3 ahead: blocks
  EXPECT_TRUE(ConsistencyPolicy::bsp().may_proceed(5, 5));
  EXPECT_FALSE(ConsistencyPolicy::bsp().may_proceed(5, 4));
  EXPECT_TRUE(ConsistencyPolicy::asp().may_proceed(1000, 0));
}

TEST(SspConsistency, CachedRowsAreRefreshedEachClockAndMustMeetTheBound) {
  const auto p = ConsistencyPolicy::from_staleness(1);
  EXPECT_TRUE(p.cache_usable(/*stamp=*/9, /*fetched_at=*/10, /*c=*/10));
  EXPECT_FALSE(p.cache_usable(8, 10, 10));  // older than c - s
  EXPECT_FALSE(p.cache_usable(10, 9, 10));  // fetched in an earlier clock
  EXPECT_TRUE(ConsistencyPolicy::asp().cache_usable(0, 10, 10));
  EXPECT_FALSE(ConsistencyPolicy::asp().cache_usable(0, 9, 10));
  EXPECT_TRUE(ConsistencyPolicy::bsp().cache_usable(10, 10, 10));
  EXPECT_FALSE(ConsistencyPolicy::bsp().cache_usable(9, 10, 10));
}

TEST(SspVectorClock, MinRisesOnlyWhenTheSlowestMoves) {
  ssp::VectorClock vc(3, 5);
  EXPECT_EQ(vc.min(), 5);
  EXPECT_FALSE(vc.advance(0, 7));
  EXPECT_FALSE(vc.advance(1, 6));
  EXPECT_EQ(vc.min(), 5);
  EXPECT_TRUE(vc.advance(2, 9));
  EXPECT_EQ(vc.min(), 6);
  EXPECT_EQ(vc.max(), 9);
  EXPECT_THROW(vc.advance(0, 6), ssp::Error);   // backwards
  EXPECT_THROW(vc.advance(3, 10), ssp::Error);  // no such worker
}

}  // namespace
