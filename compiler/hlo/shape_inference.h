// Result-shape inference for HLO operations (follows the semantics of XLA's
// ShapeInference).
//
// Each Infer* function takes operand shapes and decoded attributes
// (op_attributes.h) and returns the shape the operation produces, or an Error
// saying which operand constraint is violated ("lhs contracting dimension 1
// has size 17 but rhs contracting dimension 0 has size 16"). Errors do not
// name the instruction; callers (the verifier) add that context.
//
// Dynamic dimensions: a dimension that is bounded-dynamic (`<=N`) or
// unbounded (`?`) in an operand is never the reason for an error, and the
// inferred shape marks the dimensions derived from it as dynamic (unbounded
// when no bound can be computed). ShapesCompatible compares such shapes
// leniently. Layouts are ignored: inferred array shapes carry the default
// layout.
//
// Pure functions; thread-safe. Inputs are never retained.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/opcode.h"
#include "compiler/hlo/shape.h"

namespace kiln::hlo {

class Computation;
class Instruction;

// Parameter shapes and result shape of a computation.
struct ProgramShape {
  std::vector<Shape> parameters;
  Shape result;
};
// Fails if the computation has no root or a missing parameter number.
Result<ProgramShape> GetProgramShape(const Computation& computation);

// True when dimension i of `shape` is bounded-dynamic or unbounded.
bool IsDynamicDimension(const Shape& shape, int64_t i);

// Shape equality ignoring layouts, as XLA's ShapeUtil::Compatible, except
// that a dimension that is dynamic on either side matches any size. With
// ignore_fp_precision, two floating-point element types also match.
bool ShapesCompatible(const Shape& a, const Shape& b, bool ignore_fp_precision = false);
// Same rank and dimension sizes (leniently, as above), any element types.
bool SameDimensions(const Shape& a, const Shape& b);

// Infers the shape of `instr` from its operands' shapes, its attributes and
// the computations it calls, checking the operand constraints of its opcode
// on the way. `declared` is the shape written for the instruction, or null
// when there is none (an instruction written without a shape, which XLA
// allows where the shape follows from operands and attributes: the parser
// calls this once operands and attributes are in place).
//  - Opcodes whose result is not determined by the operands (convert,
//    reshape, iota, bitcast-convert, rng, parameter, custom-call, ...)
//    need `declared` and fail without it; with it they check the operand
//    constraints and return *declared.
//  - dot and convolution take their element type from `declared` (XLA's
//    preferred element type), else the higher-precision operand type.
//  - Collectives, async, send/recv, infeed/outfeed and custom-call are not
//    inferred: *declared is returned unchecked.
// Fails with an Error that does not name the instruction.
Result<Shape> InferInstructionShape(const Instruction& instr, const Shape* declared);

// --- Elementwise ---------------------------------------------------------------
Result<Shape> InferUnaryShape(Opcode opcode, const Shape& operand);
Result<Shape> InferBinaryShape(Opcode opcode, const Shape& lhs, const Shape& rhs);
// min and max may also be scalars.
Result<Shape> InferClampShape(const Shape& min, const Shape& operand, const Shape& max);
Result<Shape> InferSelectShape(const Shape& pred, const Shape& on_true, const Shape& on_false);
Result<Shape> InferConvertShape(const Shape& operand, PrimitiveType new_type);
Result<Shape> InferBitcastConvertShape(const Shape& operand, PrimitiveType new_type);
Result<Shape> InferStochasticConvertShape(const Shape& operand, const Shape& random,
                                          PrimitiveType new_type);
Result<Shape> InferReducePrecisionShape(const Shape& operand, int64_t exponent_bits,
                                        int64_t mantissa_bits);

// --- Data movement -----------------------------------------------------------
// Broadcast has its output shape as an input: checks `dimensions` against it.
Result<Shape> InferBroadcastShape(const Shape& operand, const Shape& output,
                                  std::span<const int64_t> dimensions);
Result<Shape> InferReshapeShape(const Shape& operand, const Shape& output);
Result<Shape> InferTransposeShape(const Shape& operand, std::span<const int64_t> permutation);
Result<Shape> InferReverseShape(const Shape& operand, std::span<const int64_t> dimensions);
Result<Shape> InferSliceShape(const Shape& operand, const SliceSpec& slice);
Result<Shape> InferDynamicSliceShape(const Shape& operand, std::span<const Shape> start_indices,
                                     std::span<const int64_t> slice_sizes);
Result<Shape> InferDynamicUpdateSliceShape(const Shape& operand, const Shape& update,
                                           std::span<const Shape> start_indices);
Result<Shape> InferConcatenateShape(std::span<const Shape> operands, int64_t dimension);
Result<Shape> InferPadShape(const Shape& operand, const Shape& padding_value,
                            const PaddingConfig& padding);
Result<Shape> InferIotaShape(const Shape& output, int64_t iota_dimension);
Result<Shape> InferGetTupleElementShape(const Shape& tuple, int64_t index);
Result<Shape> InferTupleShape(std::span<const Shape> operands);
Result<Shape> InferGetDimensionSizeShape(const Shape& operand, int64_t dimension);
Result<Shape> InferSetDimensionSizeShape(const Shape& operand, const Shape& size,
                                         int64_t dimension);

// --- Contractions and windows ------------------------------------------------
// `result_type` is the instruction's element type (XLA's preferred type).
Result<Shape> InferDotShape(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& dnums,
                            PrimitiveType result_type);
Result<Shape> InferConvolutionShape(const Shape& lhs, const Shape& rhs,
                                    const ConvolutionDimensionNumbers& dnums, const Window& window,
                                    int64_t feature_group_count, int64_t batch_group_count,
                                    PrimitiveType result_type);
// Output of sliding `window` over `base` (reduce-window, select-and-scatter).
Result<Shape> InferWindowOutputShape(const Shape& base, const Window& window,
                                     PrimitiveType element_type);
Result<Shape> InferFftShape(const Shape& operand, const FftConfig& fft);

// --- Reductions and calls -----------------------------------------------------
// Checks a reducer computation (reduce, reduce-window, scatter, select-and-
// scatter's scatter) against `inputs` input element types and init values.
Status VerifyReducer(const ProgramShape& reducer, std::span<const Shape> init_values,
                     std::span<const PrimitiveType> input_types);
// operands = inputs followed by init values.
Result<Shape> InferReduceShape(std::span<const Shape> operands, std::span<const int64_t> dimensions,
                               const ProgramShape& reducer);
Result<Shape> InferReduceWindowShape(std::span<const Shape> operands, const Window& window,
                                     const ProgramShape& reducer);
Result<Shape> InferSelectAndScatterShape(const Shape& operand, const ProgramShape& select,
                                         const Window& window, const Shape& source,
                                         const Shape& init_value, const ProgramShape& scatter);
Result<Shape> InferMapShape(std::span<const Shape> operands, const ProgramShape& to_apply);
Result<Shape> InferSortShape(std::span<const Shape> operands, int64_t dimension,
                             const ProgramShape& comparator);
Result<Shape> InferGatherShape(const Shape& operand, const Shape& start_indices,
                               const GatherDimensionNumbers& dnums,
                               std::span<const int64_t> slice_sizes);
// operands = inputs, indices, updates (variadic: N inputs, 1 indices, N updates).
Result<Shape> InferScatterShape(std::span<const Shape> operands,
                                const ScatterDimensionNumbers& dnums, const ProgramShape& reducer);

// --- Linear algebra and normalisation ------------------------------------------
Result<Shape> InferCholeskyShape(const Shape& a);
Result<Shape> InferTriangularSolveShape(const Shape& a, const Shape& b,
                                        const TriangularSolveOptions& options);
Result<Shape> InferTopKShape(const Shape& operand, int64_t k);
// operands as the instruction takes them; feature_index from the attribute.
Result<Shape> InferBatchNormShape(Opcode opcode, std::span<const Shape> operands,
                                  int64_t feature_index);

}  // namespace kiln::hlo
