// How the TPU runs each kind of op: the facts the compiler's planner and
// cost model and the timing simulator share (what each of them computes
// from these may differ).
//
//  - SpaceKind: the iteration space a kernel is tiled over.
//  - VectorOpKind: what one element of an elementwise op costs the vector
//    unit: plain arithmetic, a short sequence (division, roots) or a
//    transcendental (polynomial/EUP sequence).
//  - MxuPasses: bf16 MXU passes per product of 32-bit float operands at a
//    precision (XLA's TPU default runs f32 dots as one bf16 pass).
//  - MxuPeakRate: the MXU's peak for a product of two element types.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/opcode.h"
#include "compiler/hlo/primitive_type.h"
#include "runtime/chip/chip_spec.h"

namespace kiln::runtime {

enum class SpaceKind : uint8_t { kUntiled, kLoop, kReduce, kContraction };

enum class VectorOpKind : uint8_t { kSimple, kMultiStep, kTranscendental };

VectorOpKind VectorOpKindOf(hlo::Opcode op);

// 1 at DEFAULT, 3 at HIGH, 6 at HIGHEST.
int MxuPasses(hlo::Precision precision);

// Peak MXU op/s for products of `lhs` and `rhs` elements (one pass): the
// int8 rate when both are integers of 8 bits or fewer, the fp8 rate when
// both are floats of 8 bits or fewer, else the bf16 rate (a mixed pair is
// widened). f32 passes and 64-bit types are the caller's to apply.
double MxuPeakRate(const ChipSpec& chip, hlo::PrimitiveType lhs, hlo::PrimitiveType rhs);

}  // namespace kiln::runtime
