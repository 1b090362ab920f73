// Each stopping rule fires exactly when it should, alone and combined.
#include "autotune/stopping.hpp"

#include <gtest/gtest.h>

#include "autotune/error.hpp"

using namespace autotune;

namespace {

std::vector<Observation> history(std::initializer_list<double> scores) {
  std::vector<Observation> v;
  size_t i = 0;
  for (double s : scores) v.push_back(s < 0 ? Observation::failure(i++) : Observation::ok(i++, s));
  return v;
}

}  // namespace

TEST(Stopping, BudgetFiresAtTheBudgetExactly) {
  StoppingOptions o;
  o.budget = 3;
  EXPECT_EQ(check_history_rules(history({1, 2}), 0, 10, o).rule, StopRule::none);
  const StopDecision d = check_history_rules(history({1, 2, -1}), 0, 10, o);  // failures count
  EXPECT_EQ(d.rule, StopRule::budget);
  EXPECT_EQ(d.reason, "the budget of 3 trials is spent");
  o.budget = 0;  // off
  EXPECT_EQ(check_history_rules(history({1, 2, 3, 4}), 0, 10, o).rule, StopRule::none);
}

TEST(Stopping, ExhaustedOnlyWhenNothingRuns) {
  StoppingOptions o;
  EXPECT_EQ(check_history_rules(history({1, 2}), 1, 0, o).rule, StopRule::none);
  EXPECT_EQ(check_history_rules(history({1, 2}), 0, 0, o).rule, StopRule::exhausted);
}

TEST(Stopping, ImprovementBetweenConsecutiveRounds) {
  StoppingOptions o;
  o.budget = 0;
  o.min_improvement = 0.05;
  o.round_trials = 2;
  o.min_trials = 4;
  // Rounds of 2: [10, 8] best 8, [7, 9] best 7 (12.5% better), [6.9, 7.5] best 6.9 (1.4%).
  EXPECT_EQ(check_history_rules(history({10, 8, 7}), 0, 10, o).rule, StopRule::none);
  EXPECT_EQ(check_history_rules(history({10, 8, 7, 9}), 0, 10, o).rule, StopRule::none);
  EXPECT_EQ(check_history_rules(history({10, 8, 7, 9, 6.9}), 0, 10, o).rule,
            StopRule::none);  // round incomplete
  const StopDecision d = check_history_rules(history({10, 8, 7, 9, 6.9, 7.5}), 0, 10, o);
  EXPECT_EQ(d.rule, StopRule::improvement);
  EXPECT_EQ(d.reason,
            "the best score improved by 1.4% in the last round of 2 trials (less than 5%)");
  // Not before min_trials, even when the rounds are flat.
  o.min_trials = 6;
  EXPECT_EQ(check_history_rules(history({10, 8, 9, 9}), 0, 10, o).rule, StopRule::none);
  // A round of failures does not improve anything.
  o.min_trials = 4;
  EXPECT_EQ(check_history_rules(history({10, 8, -1, -1}), 0, 10, o).rule, StopRule::improvement);
  // Nothing succeeded before the last round: no basis for the rule.
  EXPECT_EQ(check_history_rules(history({-1, -1, 5, 4}), 0, 10, o).rule, StopRule::none);
  // Off at 0.
  o.min_improvement = 0;
  EXPECT_EQ(check_history_rules(history({10, 8, 9, 9}), 0, 10, o).rule, StopRule::none);
}

TEST(Stopping, ExpectedImprovementBelowAFraction) {
  StoppingOptions o;
  o.ei_fraction = 0.1;
  o.min_trials = 6;
  EXPECT_EQ(check_ei_rule(0.05, 1.0, 5, o).rule, StopRule::none);  // too few trials
  const StopDecision d = check_ei_rule(0.05, 1.0, 6, o);
  EXPECT_EQ(d.rule, StopRule::ei);
  EXPECT_EQ(d.reason, "the largest expected improvement is 5% of the best score (less than 10%)");
  EXPECT_EQ(check_ei_rule(0.1, 1.0, 6, o).rule, StopRule::none);  // not below
  EXPECT_EQ(check_ei_rule(0.19, 2.0, 6, o).rule, StopRule::ei);   // relative to the incumbent
  o.ei_fraction = 0;
  EXPECT_EQ(check_ei_rule(0.0, 1.0, 100, o).rule, StopRule::none);
}

TEST(Stopping, RulesCombineInOrder) {
  StoppingOptions o;
  o.budget = 4;
  o.min_improvement = 0.5;
  o.round_trials = 2;
  o.min_trials = 4;
  // Both budget and improvement hold: the budget is reported.
  EXPECT_EQ(check_history_rules(history({10, 8, 9, 9}), 0, 10, o).rule, StopRule::budget);
  o.budget = 5;
  EXPECT_EQ(check_history_rules(history({10, 8, 9, 9}), 0, 10, o).rule, StopRule::improvement);
  EXPECT_STREQ(stop_rule_name(StopRule::ei), "ei");
}

TEST(Stopping, ValidatesOptions) {
  StoppingOptions o;
  o.round_trials = 0;
  EXPECT_THROW(o.validate(), Error);
  o.round_trials = 1;
  o.ei_fraction = -1;
  EXPECT_THROW(o.validate(), Error);
}
