// The chip facts the compiler and the timing simulator share.
#include <gtest/gtest.h>

#include "runtime/chip/memory_tiles.h"
#include "runtime/chip/op_kinds.h"

namespace kiln::runtime {
namespace {

using hlo::Opcode;
using hlo::PrimitiveType;

TEST(MemoryTilesTest, SublaneTileFollowsTheElementWidth) {
  EXPECT_EQ(SublaneTile(PrimitiveType::kF32), 8);
  EXPECT_EQ(SublaneTile(PrimitiveType::kF64), 8);
  EXPECT_EQ(SublaneTile(PrimitiveType::kBF16), 16);
  EXPECT_EQ(SublaneTile(PrimitiveType::kF16), 16);
  EXPECT_EQ(SublaneTile(PrimitiveType::kS8), 32);
  EXPECT_EQ(SublaneTile(PrimitiveType::kS4), 32);
  EXPECT_EQ(SublaneTile(PrimitiveType::kPred), 32);
  EXPECT_EQ(kLanes, 128);
  EXPECT_EQ(kVectorSublanes, 8);
}

TEST(MemoryTilesTest, RoundingGuardsNonPositiveDivisors) {
  EXPECT_EQ(RoundUp(129, kLanes), 256);
  EXPECT_EQ(RoundUp(128, kLanes), 128);
  EXPECT_EQ(RoundUp(5, 0), 5);
  EXPECT_EQ(CeilDiv(129, 128), 2);
  EXPECT_EQ(CeilDiv(7, 0), 0);
}

TEST(OpKindsTest, ElementwiseOpsAreSimpleMultiStepOrTranscendental) {
  EXPECT_EQ(VectorOpKindOf(Opcode::kAdd), VectorOpKind::kSimple);
  EXPECT_EQ(VectorOpKindOf(Opcode::kNegate), VectorOpKind::kSimple);
  EXPECT_EQ(VectorOpKindOf(Opcode::kDivide), VectorOpKind::kMultiStep);
  EXPECT_EQ(VectorOpKindOf(Opcode::kRsqrt), VectorOpKind::kMultiStep);
  EXPECT_EQ(VectorOpKindOf(Opcode::kExp), VectorOpKind::kTranscendental);
  EXPECT_EQ(VectorOpKindOf(Opcode::kTanh), VectorOpKind::kTranscendental);
  EXPECT_EQ(VectorOpKindOf(Opcode::kPower), VectorOpKind::kTranscendental);
}

TEST(OpKindsTest, MxuPassesPerPrecision) {
  EXPECT_EQ(MxuPasses(hlo::Precision::kDefault), 1);
  EXPECT_EQ(MxuPasses(hlo::Precision::kHigh), 3);
  EXPECT_EQ(MxuPasses(hlo::Precision::kHighest), 6);
  EXPECT_EQ(MxuPasses(hlo::Precision::kPackedNibble), 1);
}

}  // namespace
}  // namespace kiln::runtime
