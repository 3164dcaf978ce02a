// Which converter handles each op name (op_handlers.h).
#include <unordered_map>

#include "compiler/stablehlo/op_handlers.h"

namespace kiln::stablehlo::convert_internal {
namespace {

struct Entry {
  std::string_view name;
  OpHandler handler;
};

// clang-format off
constexpr Entry kOps[] = {
    // Elementwise.
    {"abs", ConvertElementwise}, {"add", ConvertElementwise}, {"and", ConvertElementwise},
    {"atan2", ConvertElementwise}, {"cbrt", ConvertElementwise}, {"ceil", ConvertElementwise},
    {"complex", ConvertElementwise}, {"cosine", ConvertElementwise},
    {"count_leading_zeros", ConvertElementwise}, {"divide", ConvertElementwise},
    {"exponential", ConvertElementwise}, {"exponential_minus_one", ConvertElementwise},
    {"floor", ConvertElementwise}, {"imag", ConvertElementwise}, {"is_finite", ConvertElementwise},
    {"log", ConvertElementwise}, {"log_plus_one", ConvertElementwise}, {"logistic", ConvertElementwise},
    {"maximum", ConvertElementwise}, {"minimum", ConvertElementwise}, {"multiply", ConvertElementwise},
    {"negate", ConvertElementwise}, {"not", ConvertElementwise}, {"or", ConvertElementwise},
    {"popcnt", ConvertElementwise}, {"power", ConvertElementwise}, {"real", ConvertElementwise},
    {"remainder", ConvertElementwise}, {"round_nearest_afz", ConvertElementwise},
    {"round_nearest_even", ConvertElementwise}, {"rsqrt", ConvertElementwise},
    {"shift_left", ConvertElementwise}, {"shift_right_arithmetic", ConvertElementwise},
    {"shift_right_logical", ConvertElementwise}, {"sign", ConvertElementwise}, {"sine", ConvertElementwise},
    {"sqrt", ConvertElementwise}, {"subtract", ConvertElementwise}, {"tan", ConvertElementwise},
    {"tanh", ConvertElementwise}, {"xor", ConvertElementwise},
    {"compare", ConvertCompare}, {"select", ConvertSelect}, {"clamp", ConvertClamp},
    {"convert", ConvertConvert}, {"bitcast_convert", ConvertBitcastConvert},
    {"reduce_precision", ConvertReducePrecision}, {"constant", ConvertConstant}, {"iota", ConvertIota},
    // Shapes and data movement.
    {"broadcast_in_dim", ConvertBroadcastInDim}, {"broadcast", ConvertBroadcast},
    {"reshape", ConvertReshape}, {"transpose", ConvertTranspose}, {"reverse", ConvertReverse},
    {"slice", ConvertSlice}, {"dynamic_slice", ConvertDynamicSlice},
    {"dynamic_update_slice", ConvertDynamicUpdateSlice}, {"concatenate", ConvertConcatenate},
    {"pad", ConvertPad}, {"tuple", ConvertTuple}, {"get_tuple_element", ConvertGetTupleElement},
    {"optimization_barrier", ConvertOptimizationBarrier}, {"gather", ConvertGather},
    {"get_dimension_size", ConvertGetDimensionSize}, {"set_dimension_size", ConvertSetDimensionSize},
    // Ops with regions.
    {"reduce", ConvertReduce}, {"reduce_window", ConvertReduceWindow},
    {"select_and_scatter", ConvertSelectAndScatter}, {"sort", ConvertSort}, {"scatter", ConvertScatter},
    {"map", ConvertMap}, {"while", ConvertWhile}, {"case", ConvertCase}, {"if", ConvertIf},
    {"composite", ConvertComposite},
    // Contractions and linear algebra.
    {"dot", ConvertDot}, {"dot_general", ConvertDotGeneral}, {"convolution", ConvertConvolution},
    {"fft", ConvertFft}, {"triangular_solve", ConvertTriangularSolve}, {"cholesky", ConvertCholesky},
    {"batch_norm_training", ConvertBatchNorm}, {"batch_norm_inference", ConvertBatchNorm},
    {"batch_norm_grad", ConvertBatchNorm}, {"rng", ConvertRng}, {"rng_bit_generator", ConvertRngBitGenerator},
    // Collectives and communication.
    {"all_reduce", ConvertCollective}, {"all_gather", ConvertCollective}, {"reduce_scatter", ConvertCollective},
    {"all_to_all", ConvertCollective}, {"collective_permute", ConvertCollective},
    {"collective_broadcast", ConvertCollective}, {"replica_id", ConvertReplicaOrPartitionId},
    {"partition_id", ConvertReplicaOrPartitionId}, {"after_all", ConvertAfterAll},
    {"create_token", ConvertAfterAll}, {"infeed", ConvertInfeed}, {"outfeed", ConvertOutfeed},
    {"send", ConvertSend}, {"recv", ConvertRecv},
    // Custom calls.
    {"custom_call", ConvertCustomCall},
    // Dynamic shapes.
    {"dynamic_broadcast_in_dim", ConvertDynamicOp}, {"dynamic_reshape", ConvertDynamicOp},
    {"dynamic_iota", ConvertDynamicOp}, {"real_dynamic_slice", ConvertDynamicOp},
    {"dynamic_pad", ConvertDynamicOp}, {"dynamic_gather", ConvertDynamicOp}, {"dynamic_conv", ConvertDynamicOp},
    // Quantization.
    {"uniform_quantize", ConvertUniformQuantize}, {"uniform_dequantize", ConvertUniformDequantize},
    // Ops HLO has no counterpart of: kept opaque.
    {"einsum", ConvertAsOpaqueCustomCall}, {"unary_einsum", ConvertAsOpaqueCustomCall},
    {"torch_index_select", ConvertAsOpaqueCustomCall}, {"cross-replica-sum", ConvertAsOpaqueCustomCall},
    {"cross_replica_sum", ConvertAsOpaqueCustomCall}, {"compute_reshape_shape", ConvertAsOpaqueCustomCall},
    {"cstr_reshapable", ConvertAsOpaqueCustomCall},
};
// clang-format on

const std::unordered_map<std::string_view, OpHandler>& Table() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, OpHandler>();
    for (const Entry& e : kOps) t->emplace(e.name, e.handler);
    return t;
  }();
  return *table;
}

}  // namespace

OpHandler FindOpHandler(std::string_view name) {
  if (name.starts_with("chlo.")) return ConvertChlo;
  if (name.starts_with("check.")) return ConvertCheckOp;
  if (name == "func.call" || name == "call") return ConvertCall;
  std::string_view short_name;
  if (name.starts_with("stablehlo.")) {
    short_name = name.substr(10);
  } else if (name.starts_with("mhlo.")) {
    short_name = name.substr(5);
  } else {
    return nullptr;
  }
  auto it = Table().find(short_name);
  return it == Table().end() ? nullptr : it->second;
}

}  // namespace kiln::stablehlo::convert_internal
