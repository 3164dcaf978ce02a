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
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/opcode.h"

namespace kiln::runtime {

enum class SpaceKind : uint8_t { kUntiled, kLoop, kReduce, kContraction };

enum class VectorOpKind : uint8_t { kSimple, kMultiStep, kTranscendental };

VectorOpKind VectorOpKindOf(hlo::Opcode op);

// 1 at DEFAULT, 3 at HIGH, 6 at HIGHEST.
int MxuPasses(hlo::Precision precision);

}  // namespace kiln::runtime
