// The loss table (losses.def) and the losses' specs (loss_spec.hpp) agree,
// and every property a switch site reads is declared for every loss: its
// label's kind, its link, its curvature's capabilities.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "dperm/algorithms/registry.hpp"
#include "dperm/losses/loss.hpp"
#include "dperm/losses/loss_spec.hpp"
#include "dperm/options/options.hpp"

namespace {

using dperm::LabelKind;
using dperm::Link;
using dperm::LossKind;

// The link each label kind predicts through: the pairs the boundary serves
// (model_predict.cpp, evaluate_metrics.cpp).
Link LinkOfLabel(LabelKind label) {
  switch (label) {
    case LabelKind::kBinary: return Link::kSigmoid;
    case LabelKind::kTarget: return Link::kIdentity;
    case LabelKind::kClass: return Link::kSoftmax;
  }
  return Link::kIdentity;
}

TEST(LossTable, EverySpecIsItsLine) {
  std::set<std::string> names, aggregates;
  for (LossKind loss : dperm::AllLosses()) {
    EXPECT_EQ(dperm::LossSpecFor(loss).kind(), loss) << dperm::LossName(loss);
    names.insert(dperm::LossName(loss));
    aggregates.insert(dperm::LossAggregateName(loss));
    LossKind back;
    ASSERT_TRUE(dperm::LossForAggregate(dperm::LossAggregateName(loss), &back));
    EXPECT_EQ(back, loss);
  }
  EXPECT_EQ(names.size(), dperm::AllLosses().size());
  EXPECT_EQ(aggregates.size(), dperm::AllLosses().size());
  LossKind none;
  EXPECT_FALSE(dperm::LossForAggregate("dp_nothing", &none));
  EXPECT_FALSE(dperm::LossForAggregate("", &none));
}

TEST(LossTable, EveryLossDeclaresALabelAndALinkThatFit) {
  for (LossKind loss : dperm::AllLosses()) {
    const LabelKind label = dperm::LossLabel(loss);
    EXPECT_EQ(dperm::LossLink(loss), LinkOfLabel(label)) << dperm::LossName(loss);
    EXPECT_EQ(dperm::LossIsMulticlass(loss), label == LabelKind::kClass) << dperm::LossName(loss);
  }
}

TEST(LossTable, TheSpecsShapeFollowsTheLabel) {
  dperm::LossParams params;
  params.classes = 3;
  for (LossKind loss : dperm::AllLosses()) {
    const dperm::LossSpec& spec = dperm::LossSpecFor(loss);
    const bool margin = dperm::LossLabel(loss) != LabelKind::kClass;
    // A margin loss has its margin loss; a class label has its own objective.
    EXPECT_EQ(spec.MakeMarginLoss(params) != nullptr, margin) << dperm::LossName(loss);
    // Curvature capabilities are a margin loss's only.
    if (!margin) {
      EXPECT_FALSE(spec.SmoothCurvature()) << dperm::LossName(loss);
      EXPECT_FALSE(spec.LabelFreeCurvature()) << dperm::LossName(loss);
    }
    // Its offset histogram is a class label's (one sum per class).
    if (spec.Offset() != nullptr) {
      EXPECT_EQ(spec.Offset()->Histogram(), !margin) << dperm::LossName(loss);
    }
  }
}

TEST(LossTable, TheShippedLossesDeclareWhatTheyAre) {
  EXPECT_EQ(dperm::LossLabel(LossKind::kLogistic), LabelKind::kBinary);
  EXPECT_EQ(dperm::LossLabel(LossKind::kHuber), LabelKind::kTarget);
  EXPECT_EQ(dperm::LossLabel(LossKind::kSoftmax), LabelKind::kClass);
  EXPECT_TRUE(dperm::LossSpecFor(LossKind::kLogistic).SmoothCurvature());
  EXPECT_TRUE(dperm::LossSpecFor(LossKind::kLogistic).LabelFreeCurvature());
  EXPECT_FALSE(dperm::LossSpecFor(LossKind::kHuber).SmoothCurvature());
  EXPECT_FALSE(dperm::LossSpecFor(LossKind::kHuber).LabelFreeCurvature());
}

// The curvature capabilities are what the losses' curvature does: the
// logistic's f''(m, y) is continuous and the same for both labels; the
// Huber loss's jumps at |m - y| = delta.
TEST(LossTable, CurvatureCapabilitiesHold) {
  const dperm::LogisticLoss logistic;
  for (double m : {-3.0, -0.5, 0.0, 0.25, 2.0})
    EXPECT_EQ(logistic.Curvature(m, 1.0), logistic.Curvature(m, -1.0));
  const dperm::HuberLoss huber(1.0);
  EXPECT_NE(huber.Curvature(0.99, 0.0), huber.Curvature(1.01, 0.0));
  EXPECT_NE(huber.Curvature(0.5, 0.0), huber.Curvature(0.5, 2.0));
}

// An algorithm trains exactly the losses with every property it needs.
TEST(LossTable, AlgorithmsTakeLossesByTheirProperties) {
  for (dperm::Algorithm a : dperm::AllAlgorithms())
    for (LossKind loss : dperm::AllLosses()) {
      bool has_all = true;
      for (const dperm::LossNeed& need : dperm::SpecFor(a).loss_needs)
        has_all = has_all && dperm::LossHas(loss, need.property);
      EXPECT_EQ(dperm::TakesLoss(a, loss), has_all)
          << dperm::AlgorithmName(a) << " " << dperm::LossName(loss);
    }
  // The second-order mechanisms need a margin loss first (the refusal of a
  // class label names that), then their curvature.
  for (dperm::Algorithm a : {dperm::Algorithm::kSsp, dperm::Algorithm::kDpNewton,
                             dperm::Algorithm::kObjective, dperm::Algorithm::kObjectiveApprox}) {
    const auto& needs = dperm::SpecFor(a).loss_needs;
    ASSERT_EQ(needs.size(), 2u) << dperm::AlgorithmName(a);
    EXPECT_EQ(needs[0].property, dperm::LossProperty::kMarginLoss);
    EXPECT_TRUE(dperm::TakesLoss(a, LossKind::kLogistic));
    EXPECT_FALSE(dperm::TakesLoss(a, LossKind::kHuber));
    EXPECT_FALSE(dperm::TakesLoss(a, LossKind::kSoftmax));
  }
}

}  // namespace
