// Building HLO instructions for the StableHLO conversion: one HloEmitter
// adds instructions to one computation of a module (in the module's arena),
// named uniquely across the module (`add.12`), with attributes written in
// the canonical text the HLO parser keeps, so that a printed and re-parsed
// module equals the built one.
//
// Holds non-owning pointers to the module and computation, which must
// outlive it. Not thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"
#include "compiler/hlo/module.h"

namespace kiln::stablehlo {

// Module-wide unique names.
class NameGen {
 public:
  // Suffixes start after `last_used`.
  explicit NameGen(int64_t last_used = 0) : counter_(last_used) {}
  // `base` with a unique numeric suffix; characters HLO names cannot hold
  // become '_'.
  std::string Next(std::string_view base);
  // `base` with the characters HLO names cannot hold as '_' (and a leading
  // '_' unless it starts with a letter), without a suffix.
  static std::string Sanitized(std::string_view base);

 private:
  int64_t counter_ = 0;
};

// `{1,2,3}`
std::string IntListText(std::span<const int64_t> values);

class HloEmitter {
 public:
  HloEmitter(hlo::Module* module, hlo::Computation* computation, NameGen* names)
      : module_(module), computation_(computation), names_(names) {}

  hlo::Computation* computation() const { return computation_; }
  hlo::Module* module() const { return module_; }
  NameGen* names() const { return names_; }

  hlo::Instruction* Add(hlo::Opcode opcode, hlo::Shape shape, std::span<hlo::Instruction* const> operands,
                        std::string_view name = {});
  hlo::Instruction* Add(hlo::Opcode opcode, hlo::Shape shape, std::initializer_list<hlo::Instruction*> operands,
                        std::string_view name = {}) {
    return Add(opcode, std::move(shape), std::span<hlo::Instruction* const>(operands.begin(), operands.size()),
               name);
  }
  hlo::Instruction* Parameter(int64_t number, hlo::Shape shape, std::string_view name = {});
  hlo::Instruction* Constant(hlo::Literal literal, std::string_view name = {});
  // A rank-0 constant of `type` holding `value` (converted: integers
  // truncate, floats round to nearest even; complex takes it as the real
  // part).
  hlo::Instruction* ScalarConstant(hlo::PrimitiveType type, double value);
  // `value` broadcast to `shape` (an array shape); a rank-0 shape is the
  // constant itself.
  hlo::Instruction* ConstantLike(const hlo::Shape& shape, double value);
  // Bits of a float element (NaN payloads, max finite) broadcast to `shape`.
  hlo::Instruction* ConstantBitsLike(const hlo::Shape& shape, uint64_t bits);

  hlo::Instruction* Broadcast(hlo::Instruction* operand, const hlo::Shape& shape,
                              std::span<const int64_t> dimensions);
  hlo::Instruction* Reshape(hlo::Instruction* operand, const hlo::Shape& shape);
  // StableHLO's broadcast_in_dim of `operand` to `shape` (its element type
  // is the operand's): operand dimension i goes to dimensions[i]; size-1
  // dimensions that expand are reshaped away first, as XLA's BroadcastInDim
  // does, since HLO's broadcast keeps every operand dimension whole. Fails
  // when the dimensions do not fit the ranks or a size cannot broadcast.
  Result<hlo::Instruction*> BroadcastInDim(hlo::Instruction* operand, const hlo::Shape& shape,
                                           std::span<const int64_t> dimensions);
  hlo::Instruction* Convert(hlo::Instruction* operand, hlo::PrimitiveType type);
  hlo::Instruction* GetTupleElement(hlo::Instruction* tuple, int64_t index);
  hlo::Instruction* Tuple(std::span<hlo::Instruction* const> elements);
  // Elementwise ops on same-shaped operands; the result takes the first
  // operand's shape (compare: pred).
  hlo::Instruction* Unary(hlo::Opcode opcode, hlo::Instruction* x);
  hlo::Instruction* Binary(hlo::Opcode opcode, hlo::Instruction* a, hlo::Instruction* b);
  hlo::Instruction* Compare(hlo::Instruction* a, hlo::Instruction* b, std::string_view direction,
                            std::string_view type = {});
  hlo::Instruction* Select(hlo::Instruction* pred, hlo::Instruction* a, hlo::Instruction* b);

  static void SetAttr(hlo::Instruction* instr, std::string_view name, std::string_view value);
  static void SetRawAttr(hlo::Instruction* instr, std::string_view name, std::string_view value);

 private:
  hlo::Module* module_;
  hlo::Computation* computation_;
  NameGen* names_;
};

}  // namespace kiln::stablehlo
