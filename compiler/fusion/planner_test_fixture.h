// The planner tests' fixture: plans a module's entry computation, checks
// that the plan is valid, and finds its edges and kernels by instruction
// name. One fixture per test; not thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>

#include "compiler/fusion/kernel_formation.h"
#include "compiler/fusion/planner.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::fusion::testing {

class PlannerTest : public ::testing::Test {
 protected:
  const FusionPlan& Plan(std::string_view text, PlanKind kind = PlanKind::kHeuristic) {
    module_ = passes::testing::ParseVerified(text);
    EXPECT_NE(module_, nullptr);
    auto plan = PlanComputation(*module_->entry(), kind, options_);
    EXPECT_TRUE(plan.has_value()) << (plan ? "" : plan.error().message);
    plan_ = plan.value_or(FusionPlan{});
    if (plan) {
      auto valid = ValidatePlan(*module_->entry(), options_.tiling, plan_);
      EXPECT_TRUE(valid.has_value()) << (valid ? "" : valid.error().message);
    }
    return plan_;
  }
  int64_t Index(std::string_view name) {
    hlo::Instruction* instr = passes::testing::FindInstruction(*module_, name);
    EXPECT_NE(instr, nullptr) << name;
    return instr ? instr->index_in_parent() : -1;
  }
  const FusionEdge* Edge(std::string_view producer, std::string_view consumer) {
    for (const FusionEdge& e : plan_.edges) {
      if (!e.is_sibling() && e.producer == Index(producer) && e.consumer == Index(consumer)) {
        return &e;
      }
    }
    ADD_FAILURE() << "no edge " << producer << " -> " << consumer;
    return nullptr;
  }
  // Expects the edge p -> c refused as `kind`, its reason containing `text`.
  void ExpectRefused(std::string_view p, std::string_view c, DecisionKind kind, std::string_view text) {
    const FusionEdge* edge = Edge(p, c);
    if (edge == nullptr) return;
    EXPECT_FALSE(edge->fused) << p << " -> " << c;
    EXPECT_EQ(edge->kind, kind) << p << " -> " << c;
    EXPECT_NE(edge->reason.find(text), std::string::npos) << edge->reason;
  }
  const Kernel& KernelOf(std::string_view root) {
    int64_t k = plan_.root_kernel[Index(root)];
    EXPECT_GE(k, 0) << root << " is not a kernel root";
    return plan_.kernels[std::max<int64_t>(k, 0)];
  }

  PlannerOptions options_;
  std::unique_ptr<hlo::Module> module_;
  FusionPlan plan_;
};

}  // namespace kiln::fusion::testing
