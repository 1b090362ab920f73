#include "autotune/objective.hpp"

#include <gtest/gtest.h>

#include "autotune/error.hpp"

using namespace autotune;

TEST(Objective, GammaTradesTimeAgainstCost) {
  const Reference ref = make_reference(100.0, 50.0);
  // The reference configuration scores 1 for every gamma.
  for (double g : {0.0, 0.3, 1.0}) EXPECT_DOUBLE_EQ(score(100.0, 50.0, ref, g), 1.0);
  // Twice as fast at three times the cost.
  EXPECT_DOUBLE_EQ(score(50.0, 150.0, ref, 0.0), 0.5);  // fastest wins
  EXPECT_DOUBLE_EQ(score(50.0, 150.0, ref, 1.0), 3.0);  // cheapest wins
  EXPECT_DOUBLE_EQ(score(50.0, 150.0, ref, 0.5), 0.5 * 0.5 + 0.5 * 3.0);
}

TEST(Objective, CostIsRateTimesNodesTimesTime) {
  EXPECT_DOUBLE_EQ(run_cost(2.5, 4, 10.0), 100.0);
  EXPECT_THROW(run_cost(1.0, 0, 1.0), Error);
  EXPECT_THROW(run_cost(-1.0, 1, 1.0), Error);
}

TEST(Objective, RejectsBadInput) {
  const Reference ref{10, 10};
  EXPECT_THROW(score(1, 1, ref, 1.5), Error);
  EXPECT_THROW(score(1, 1, ref, -0.1), Error);
  EXPECT_THROW(score(-1, 1, ref, 0.5), Error);
  EXPECT_THROW(score(1, 1, Reference{}, 0.5), Error);
  EXPECT_THROW(make_reference(0, 1), Error);
  EXPECT_DOUBLE_EQ(parse_gamma("--gamma", "0.25"), 0.25);
  try {
    parse_gamma("--autotune-gamma", "2");
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "--autotune-gamma: '2' is out of range; allowed: a number from 0 to 1");
  }
}
