// The converters of each family of ops, registered by name in op_table.cc.
// Each converts one op into instructions of the converter's current
// computation and binds the op's results (Converter::SetResults). Internal
// to kiln_stablehlo.
#pragma once

#include "compiler/stablehlo/converter.h"
#include "compiler/stablehlo/dynamic_ops.h"

namespace kiln::stablehlo::convert_internal {

// convert_elementwise.cc
Status ConvertElementwise(Converter& c, const Operation& op);
Status ConvertCompare(Converter& c, const Operation& op);
Status ConvertSelect(Converter& c, const Operation& op);
Status ConvertClamp(Converter& c, const Operation& op);
Status ConvertConvert(Converter& c, const Operation& op);
Status ConvertBitcastConvert(Converter& c, const Operation& op);
Status ConvertReducePrecision(Converter& c, const Operation& op);
Status ConvertConstant(Converter& c, const Operation& op);
Status ConvertIota(Converter& c, const Operation& op);

// convert_shape_ops.cc
Status ConvertBroadcastInDim(Converter& c, const Operation& op);
Status ConvertBroadcast(Converter& c, const Operation& op);
Status ConvertReshape(Converter& c, const Operation& op);
Status ConvertTranspose(Converter& c, const Operation& op);
Status ConvertReverse(Converter& c, const Operation& op);
Status ConvertSlice(Converter& c, const Operation& op);
Status ConvertDynamicSlice(Converter& c, const Operation& op);
Status ConvertDynamicUpdateSlice(Converter& c, const Operation& op);
Status ConvertConcatenate(Converter& c, const Operation& op);
Status ConvertPad(Converter& c, const Operation& op);
Status ConvertTuple(Converter& c, const Operation& op);
Status ConvertGetTupleElement(Converter& c, const Operation& op);
Status ConvertOptimizationBarrier(Converter& c, const Operation& op);
Status ConvertGather(Converter& c, const Operation& op);
Status ConvertGetDimensionSize(Converter& c, const Operation& op);
Status ConvertSetDimensionSize(Converter& c, const Operation& op);

// convert_region_ops.cc
Status ConvertReduce(Converter& c, const Operation& op);
Status ConvertReduceWindow(Converter& c, const Operation& op);
Status ConvertSelectAndScatter(Converter& c, const Operation& op);
Status ConvertSort(Converter& c, const Operation& op);
Status ConvertScatter(Converter& c, const Operation& op);
Status ConvertMap(Converter& c, const Operation& op);

// convert_control_flow.cc
Status ConvertWhile(Converter& c, const Operation& op);
Status ConvertCase(Converter& c, const Operation& op);
Status ConvertIf(Converter& c, const Operation& op);
Status ConvertCall(Converter& c, const Operation& op);
Status ConvertComposite(Converter& c, const Operation& op);

// convert_linalg.cc
Status ConvertDot(Converter& c, const Operation& op);
Status ConvertDotGeneral(Converter& c, const Operation& op);
Status ConvertConvolution(Converter& c, const Operation& op);
Status ConvertFft(Converter& c, const Operation& op);
Status ConvertTriangularSolve(Converter& c, const Operation& op);
Status ConvertCholesky(Converter& c, const Operation& op);
Status ConvertBatchNorm(Converter& c, const Operation& op);
Status ConvertRng(Converter& c, const Operation& op);
Status ConvertRngBitGenerator(Converter& c, const Operation& op);

// convert_collectives.cc
Status ConvertCollective(Converter& c, const Operation& op);
Status ConvertReplicaOrPartitionId(Converter& c, const Operation& op);
Status ConvertAfterAll(Converter& c, const Operation& op);
Status ConvertInfeed(Converter& c, const Operation& op);
Status ConvertOutfeed(Converter& c, const Operation& op);
Status ConvertSend(Converter& c, const Operation& op);
Status ConvertRecv(Converter& c, const Operation& op);

// A dense attribute as an HLO constant of `shape` (a splat broadcast, NaNs
// of narrow floats as HLO text keeps them) (convert_elementwise.cc).
Result<hlo::Instruction*> EmitDenseConstant(Converter& c, const Operation& op, const Attr* value,
                                            const hlo::Shape& shape);

// convert_custom_call.cc
Status ConvertCustomCall(Converter& c, const Operation& op);
Status ConvertCheckOp(Converter& c, const Operation& op);
// An op with no HLO counterpart kept as a custom call named after it
// ("stablehlo.einsum"), its attributes in backend_config: fingerprinted,
// refused by the compiler.
Status ConvertAsOpaqueCustomCall(Converter& c, const Operation& op);

// convert_dynamic.cc: the dynamic ops, as their static counterparts when
// the result type says all, else as the custom calls of dynamic_ops.h.
Status ConvertDynamicOp(Converter& c, const Operation& op);
// The gather's HLO attributes but slice_sizes (convert_shape_ops.cc).
Result<ConfigPairs> GatherAttributes(const Converter& c, const Operation& op);

// chlo_ops.cc
Status ConvertChlo(Converter& c, const Operation& op);

// quant_lowering.cc
Status ConvertUniformQuantize(Converter& c, const Operation& op);
Status ConvertUniformDequantize(Converter& c, const Operation& op);

}  // namespace kiln::stablehlo::convert_internal
