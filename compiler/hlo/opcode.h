// HLO opcodes (xla/hlo/ir/hlo_opcode.h) and their coarse categories.
//
// Pure functions over an enum; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::hlo {

// X(enum, text name, category)
#define KILN_OPCODES(X)                                          \
  X(kAbs, "abs", kUnary)                                         \
  X(kAcos, "acos", kUnary)                                       \
  X(kAcosh, "acosh", kUnary)                                     \
  X(kAdd, "add", kBinary)                                        \
  X(kAddDependency, "add-dependency", kOther)                    \
  X(kAfterAll, "after-all", kOther)                              \
  X(kAllGather, "all-gather", kCollective)                       \
  X(kAllGatherDone, "all-gather-done", kCollective)              \
  X(kAllGatherStart, "all-gather-start", kCollective)            \
  X(kAllReduce, "all-reduce", kCollective)                       \
  X(kAllReduceDone, "all-reduce-done", kCollective)              \
  X(kAllReduceStart, "all-reduce-start", kCollective)            \
  X(kAllToAll, "all-to-all", kCollective)                        \
  X(kAnd, "and", kBinary)                                        \
  X(kAsin, "asin", kUnary)                                       \
  X(kAsinh, "asinh", kUnary)                                     \
  X(kAsyncDone, "async-done", kOther)                            \
  X(kAsyncStart, "async-start", kOther)                          \
  X(kAsyncUpdate, "async-update", kOther)                        \
  X(kAtan2, "atan2", kBinary)                                    \
  X(kAtanh, "atanh", kUnary)                                     \
  X(kBatchNormGrad, "batch-norm-grad", kOther)                   \
  X(kBatchNormInference, "batch-norm-inference", kOther)         \
  X(kBatchNormTraining, "batch-norm-training", kOther)           \
  X(kBitcast, "bitcast", kOther)                                 \
  X(kBitcastConvert, "bitcast-convert", kOther)                  \
  X(kBroadcast, "broadcast", kOther)                             \
  X(kCall, "call", kOther)                                       \
  X(kCbrt, "cbrt", kUnary)                                       \
  X(kCeil, "ceil", kUnary)                                       \
  X(kCholesky, "cholesky", kOther)                               \
  X(kClamp, "clamp", kTernary)                                   \
  X(kCollectiveBroadcast, "collective-broadcast", kCollective)   \
  X(kCollectivePermute, "collective-permute", kCollective)       \
  X(kCollectivePermuteDone, "collective-permute-done", kCollective) \
  X(kCollectivePermuteStart, "collective-permute-start", kCollective) \
  X(kCompare, "compare", kBinary)                                \
  X(kComplex, "complex", kBinary)                                \
  X(kConcatenate, "concatenate", kOther)                         \
  X(kConditional, "conditional", kOther)                         \
  X(kConstant, "constant", kOther)                               \
  X(kConvert, "convert", kUnary)                                 \
  X(kConvolution, "convolution", kOther)                         \
  X(kCopy, "copy", kUnary)                                       \
  X(kCopyDone, "copy-done", kOther)                              \
  X(kCopyStart, "copy-start", kOther)                            \
  X(kCos, "cosine", kUnary)                                      \
  X(kCosh, "cosh", kUnary)                                       \
  X(kClz, "count-leading-zeros", kUnary)                         \
  X(kCustomCall, "custom-call", kOther)                          \
  X(kDivide, "divide", kBinary)                                  \
  X(kDomain, "domain", kOther)                                   \
  X(kDot, "dot", kOther)                                         \
  X(kDynamicReshape, "dynamic-reshape", kOther)                  \
  X(kDynamicSlice, "dynamic-slice", kOther)                      \
  X(kDynamicUpdateSlice, "dynamic-update-slice", kOther)         \
  X(kErf, "erf", kUnary)                                         \
  X(kExp, "exponential", kUnary)                                 \
  X(kExpm1, "exponential-minus-one", kUnary)                     \
  X(kFft, "fft", kOther)                                         \
  X(kFloor, "floor", kUnary)                                     \
  X(kFusion, "fusion", kOther)                                   \
  X(kGather, "gather", kOther)                                   \
  X(kGetDimensionSize, "get-dimension-size", kOther)             \
  X(kGetTupleElement, "get-tuple-element", kOther)               \
  X(kImag, "imag", kUnary)                                       \
  X(kInfeed, "infeed", kOther)                                   \
  X(kIota, "iota", kOther)                                       \
  X(kIsFinite, "is-finite", kUnary)                              \
  X(kLog, "log", kUnary)                                         \
  X(kLog1p, "log-plus-one", kUnary)                              \
  X(kLogistic, "logistic", kUnary)                               \
  X(kMap, "map", kOther)                                         \
  X(kMaximum, "maximum", kBinary)                                \
  X(kMinimum, "minimum", kBinary)                                \
  X(kMultiply, "multiply", kBinary)                              \
  X(kNegate, "negate", kUnary)                                   \
  X(kNot, "not", kUnary)                                         \
  X(kOptimizationBarrier, "opt-barrier", kOther)                 \
  X(kOr, "or", kBinary)                                          \
  X(kOutfeed, "outfeed", kOther)                                 \
  X(kPad, "pad", kOther)                                         \
  X(kParameter, "parameter", kOther)                             \
  X(kPartitionId, "partition-id", kOther)                        \
  X(kPopulationCount, "popcnt", kUnary)                          \
  X(kPower, "power", kBinary)                                    \
  X(kRaggedAllToAll, "ragged-all-to-all", kCollective)           \
  X(kRaggedDot, "ragged-dot", kOther)                            \
  X(kReal, "real", kUnary)                                       \
  X(kRecv, "recv", kOther)                                       \
  X(kRecvDone, "recv-done", kOther)                              \
  X(kReduce, "reduce", kOther)                                   \
  X(kReducePrecision, "reduce-precision", kUnary)                \
  X(kReduceScatter, "reduce-scatter", kCollective)               \
  X(kReduceWindow, "reduce-window", kOther)                      \
  X(kRemainder, "remainder", kBinary)                            \
  X(kReplicaId, "replica-id", kOther)                            \
  X(kReshape, "reshape", kOther)                                 \
  X(kReverse, "reverse", kOther)                                 \
  X(kRng, "rng", kOther)                                         \
  X(kRngBitGenerator, "rng-bit-generator", kOther)               \
  X(kRngGetAndUpdateState, "rng-get-and-update-state", kOther)   \
  X(kRoundNearestAfz, "round-nearest-afz", kUnary)               \
  X(kRoundNearestEven, "round-nearest-even", kUnary)             \
  X(kRsqrt, "rsqrt", kUnary)                                     \
  X(kScaledDot, "scaled-dot", kOther)                            \
  X(kScatter, "scatter", kOther)                                 \
  X(kSelect, "select", kTernary)                                 \
  X(kSelectAndScatter, "select-and-scatter", kOther)             \
  X(kSend, "send", kOther)                                       \
  X(kSendDone, "send-done", kOther)                              \
  X(kSetDimensionSize, "set-dimension-size", kOther)             \
  X(kShiftLeft, "shift-left", kBinary)                           \
  X(kShiftRightArithmetic, "shift-right-arithmetic", kBinary)    \
  X(kShiftRightLogical, "shift-right-logical", kBinary)          \
  X(kSign, "sign", kUnary)                                       \
  X(kSin, "sine", kUnary)                                        \
  X(kSinh, "sinh", kUnary)                                       \
  X(kSlice, "slice", kOther)                                     \
  X(kSort, "sort", kOther)                                       \
  X(kSqrt, "sqrt", kUnary)                                       \
  X(kStochasticConvert, "stochastic-convert", kOther)            \
  X(kSubtract, "subtract", kBinary)                              \
  X(kTan, "tan", kUnary)                                         \
  X(kTanh, "tanh", kUnary)                                       \
  X(kTopK, "topk", kOther)                                       \
  X(kTranspose, "transpose", kOther)                             \
  X(kTriangularSolve, "triangular-solve", kOther)                \
  X(kTuple, "tuple", kOther)                                     \
  X(kWhile, "while", kOther)                                     \
  X(kXor, "xor", kBinary)

enum class Opcode : uint8_t {
#define KILN_OPCODE_ENUM(e, name, category) e,
  KILN_OPCODES(KILN_OPCODE_ENUM)
#undef KILN_OPCODE_ENUM
};

enum class OpcodeCategory : uint8_t {
  kUnary,       // elementwise, one operand
  kBinary,      // elementwise, two operands
  kTernary,     // elementwise, three operands (select, clamp)
  kCollective,  // cross-replica/partition communication
  kOther,
};

std::string_view OpcodeName(Opcode op);
std::optional<Opcode> OpcodeFromName(std::string_view name);
OpcodeCategory CategoryOf(Opcode op);
int OpcodeCount();

inline bool IsElementwise(Opcode op) {
  OpcodeCategory c = CategoryOf(op);
  return c == OpcodeCategory::kUnary || c == OpcodeCategory::kBinary ||
         c == OpcodeCategory::kTernary;
}

}  // namespace kiln::hlo
