// Helpers shared by the shape_inference*.cc files, which implement
// shape_inference.h one op family per file. Internal to those files: other
// code uses shape_inference.h.
//
// Errors name the offending value but not the instruction (the verifier adds
// that). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/shape_inference.h"

namespace kiln::hlo {

class Instruction;

namespace shape_inference_internal {

using Dims = std::span<const int64_t>;

// Text for error messages: a shape, a dimension list "{1,2}", a type name.
std::string Str(const Shape& s);
std::string Join(Dims v);
std::string TypeName(PrimitiveType t);

// Fails unless `s` is an array; `what` names it in the message.
Status ExpectArray(const Shape& s, std::string_view what);

bool InRange(int64_t v, int64_t n);
bool Contains(Dims v, int64_t x);

// Checks that every value of `dims` is a valid, distinct dimension of a
// rank-`rank` shape (and sorted when asked).
Status CheckDimList(Dims dims, int64_t rank, std::string_view what, bool sorted = false);

bool SameTypeIgnoringFp(PrimitiveType a, PrimitiveType b);
// The wider of two floating-point types, else `a`.
PrimitiveType HigherPrecision(PrimitiveType a, PrimitiveType b);

// dims[i] of s, with its dynamic flag, for building inferred shapes.
struct Dim {
  int64_t size;
  bool dynamic;
};
Dim DimOf(const Shape& s, int64_t i);
std::vector<Dim> DimsOf(const Shape& s);
// An array shape from `dims`; a dynamic dimension of unknown size becomes
// unbounded. Fails when the rank exceeds kMaxRank.
Result<Shape> MakeArray(PrimitiveType type, const std::vector<Dim>& dims);

// Lenient equality of dimension i of a and dimension j of b.
bool SizesMatch(const Shape& a, int64_t i, const Shape& b, int64_t j);

bool IsScalar(const Shape& s);

// --- Instructions that call computations (shape_inference_control.cc) --------
// The program shape of the computation named by attribute `attr` of `instr`.
Result<ProgramShape> CalleeShape(const Instruction& instr, std::string_view attr);
Result<Shape> InferWhile(const Instruction& instr);
Result<Shape> InferConditional(const Instruction& instr);
// call and fusion: parameters match operands, the root is the result.
// Fusions may leave trailing operands unused, as XLA allows.
Result<Shape> InferCallLike(const Instruction& instr, std::string_view attr, bool fewer_params_ok);

}  // namespace shape_inference_internal
}  // namespace kiln::hlo
