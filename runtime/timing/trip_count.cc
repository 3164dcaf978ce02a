#include "runtime/timing/trip_count.h"

#include <cctype>
#include <optional>
#include <string>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/op_attributes.h"

namespace kiln::runtime::timing {
namespace {

using hlo::ComparisonDirection;
using hlo::Instruction;
using hlo::Opcode;

Error DependsOnData(const Instruction& w, const std::string& why) {
  return UnimplementedError("timing-only: while loop %" + std::string(w.name()) +
                            " trip count depends on data (" + why + ")");
}

// `"known_trip_count":{"n":"12"}` in the backend_config.
std::optional<int64_t> KnownTripCount(const Instruction& w) {
  const hlo::Attribute* config = w.FindAttribute("backend_config");
  if (config == nullptr) return std::nullopt;
  const std::string_view text = config->value;
  size_t at = text.find("known_trip_count");
  if (at == std::string::npos) return std::nullopt;
  at = text.find("\"n\"", at);
  if (at == std::string::npos) return std::nullopt;
  at = text.find(':', at);
  if (at == std::string::npos) return std::nullopt;
  ++at;
  while (at < text.size() && (text[at] == ' ' || text[at] == '"')) ++at;
  int64_t n = 0;
  size_t digits = 0;
  while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])) && digits < 18) {
    n = n * 10 + (text[at++] - '0');
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return n;
}

// The value of a scalar integer constant.
std::optional<int64_t> IntConstant(const Instruction* i) {
  if (i->opcode() != Opcode::kConstant || i->literal() == nullptr) return std::nullopt;
  const hlo::Shape& s = i->shape();
  if (!s.IsArray() || s.rank() != 0 || !hlo::IsInteger(s.element_type())) return std::nullopt;
  if (i->literal()->elided() || i->literal()->element_count() != 1) return std::nullopt;
  return static_cast<int64_t>(i->literal()->GetAsDouble(0));
}

// Tuple index when `i` is get-tuple-element(parameter 0).
std::optional<int64_t> ParameterElement(const Instruction* i) {
  if (i->opcode() != Opcode::kGetTupleElement || i->operand(0)->opcode() != Opcode::kParameter) {
    return std::nullopt;
  }
  Result<int64_t> index = hlo::GetTupleIndex(*i);
  if (!index) return std::nullopt;
  return *index;
}

ComparisonDirection Flip(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kLt: return ComparisonDirection::kGt;
    case ComparisonDirection::kLe: return ComparisonDirection::kGe;
    case ComparisonDirection::kGt: return ComparisonDirection::kLt;
    case ComparisonDirection::kGe: return ComparisonDirection::kLe;
    default: return d;
  }
}

bool Holds(ComparisonDirection d, int64_t a, int64_t b) {
  switch (d) {
    case ComparisonDirection::kLt: return a < b;
    case ComparisonDirection::kLe: return a <= b;
    case ComparisonDirection::kGt: return a > b;
    case ComparisonDirection::kGe: return a >= b;
    case ComparisonDirection::kNe: return a != b;
    case ComparisonDirection::kEq: return a == b;
  }
  return false;
}

// Iterations of `for (i = start; i OP limit; i += step)`; nullopt when the
// loop never ends.
std::optional<int64_t> CountedTrips(ComparisonDirection d, int64_t start, int64_t limit,
                                    int64_t step) {
  if (!Holds(d, start, limit)) return 0;
  if (step == 0) return std::nullopt;
  auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  switch (d) {
    case ComparisonDirection::kLt:
      if (step < 0) return std::nullopt;
      return ceil_div(limit - start, step);
    case ComparisonDirection::kLe:
      if (step < 0) return std::nullopt;
      return (limit - start) / step + 1;
    case ComparisonDirection::kGt:
      if (step > 0) return std::nullopt;
      return ceil_div(start - limit, -step);
    case ComparisonDirection::kGe:
      if (step > 0) return std::nullopt;
      return (start - limit) / (-step) + 1;
    case ComparisonDirection::kNe:
      if ((limit - start) % step != 0 || (limit - start) / step < 0) return std::nullopt;
      return (limit - start) / step;
    case ComparisonDirection::kEq:
      return step == 0 ? std::nullopt : std::optional<int64_t>(1);
  }
  return std::nullopt;
}

}  // namespace

Result<int64_t> StaticTripCount(const Instruction& w) {
  if (w.opcode() != Opcode::kWhile)
    return InternalError("%" + std::string(w.name()) + " is not a while loop");
  if (std::optional<int64_t> known = KnownTripCount(w)) return *known;
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* cond, hlo::GetCalledComputation(w, "condition"));
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* body, hlo::GetCalledComputation(w, "body"));
  const Instruction* compare = cond->root();
  if (compare == nullptr || compare->opcode() != Opcode::kCompare) {
    return DependsOnData(w, "its condition is not a comparison");
  }
  KILN_ASSIGN_OR_RETURN(hlo::Comparison cmp, hlo::GetComparison(*compare));
  ComparisonDirection direction = cmp.direction;
  std::optional<int64_t> index = ParameterElement(compare->operand(0));
  std::optional<int64_t> limit = IntConstant(compare->operand(1));
  if (!index || !limit) {
    index = ParameterElement(compare->operand(1));
    limit = IntConstant(compare->operand(0));
    direction = Flip(direction);
  }
  if (!index || !limit) {
    return DependsOnData(w, "its condition does not compare a loop counter with a constant");
  }
  const Instruction* init = w.operand(0);
  if (init->opcode() != Opcode::kTuple || *index >= init->operand_count()) {
    return DependsOnData(w, "its initial value is not a tuple built in the kernel");
  }
  std::optional<int64_t> start = IntConstant(init->operand(*index));
  if (!start) return DependsOnData(w, "the loop counter does not start at a constant");
  const Instruction* next = body->root();
  if (next == nullptr || next->opcode() != Opcode::kTuple || *index >= next->operand_count()) {
    return DependsOnData(w, "its body does not return a tuple");
  }
  const Instruction* update = next->operand(*index);
  std::optional<int64_t> step;
  if (update->opcode() == Opcode::kAdd || update->opcode() == Opcode::kSubtract) {
    const Instruction* a = update->operand(0);
    const Instruction* b = update->operand(1);
    if (ParameterElement(a) == index) step = IntConstant(b);
    if (!step && update->opcode() == Opcode::kAdd && ParameterElement(b) == index) step = IntConstant(a);
    if (step && update->opcode() == Opcode::kSubtract) step = -*step;
  }
  if (!step) return DependsOnData(w, "the loop counter is not stepped by a constant");
  std::optional<int64_t> trips = CountedTrips(direction, *start, *limit, *step);
  if (!trips) {
    return InvalidArgumentError("timing-only: while loop %" + std::string(w.name()) +
                                " never terminates (counter starts at " + std::to_string(*start) +
                                ", steps by " + std::to_string(*step) + ", limit " + std::to_string(*limit) +
                                ")");
  }
  return *trips;
}

}  // namespace kiln::runtime::timing
