#include "server/service/compile_failure.h"

#include <gtest/gtest.h>

#include "server/service/reasons.h"

namespace kiln::service {
namespace {

TEST(CompileFailureTest, AProgramThatCannotFitHasItsOwnReason) {
  Error error = CompileFailure(ResourceExhaustedError("program needs 88 GB of HBM at peak"));
  EXPECT_EQ(error.code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(error.reason(), kDoesNotFit);
  EXPECT_NE(error.message.find("88 GB of HBM"), std::string::npos) << error.message;
}

TEST(CompileFailureTest, WhatKilnDoesNotSupportIsUnimplemented) {
  Error error = CompileFailure(UnimplementedError("resharding f32[8] from {replicated} to {maximal device=1}"));
  EXPECT_EQ(error.code, ErrorCode::kUnimplemented);
  EXPECT_EQ(error.reason(), kUnsupported);
}

TEST(CompileFailureTest, KilnsOwnFaultsStayInternal) {
  for (const Error& fault : {InternalError("slot 3 assigned twice"), DataLossError("plan checksum mismatch")}) {
    Error error = CompileFailure(fault);
    EXPECT_EQ(error.code, ErrorCode::kInternal) << fault;
    EXPECT_TRUE(error.reason().empty()) << error.reason();
  }
}

TEST(CompileFailureTest, TheCompilersOwnReasonIsKept) {
  Error error = CompileFailure(InvalidArgumentError("replica group {0,1} leaves out device 2").WithReason("invalid_collective"));
  EXPECT_EQ(error.code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(error.reason(), "invalid_collective");
}

TEST(CompileFailureTest, AnyOtherRefusalIsACompileFailure) {
  for (const Error& refusal : {InvalidArgumentError("dot %d.1 has no contracting dimension"),
                               FailedPreconditionError("no kernel for this layout"), OutOfRangeError("tile past 2^31")}) {
    Error error = CompileFailure(refusal);
    EXPECT_EQ(error.reason(), kCompileFailed) << refusal;
    EXPECT_NE(error.message.find(refusal.message), std::string::npos) << error.message;
  }
}

}  // namespace
}  // namespace kiln::service
