#include "runtime/eval/custom_call_math.h"

#include <cmath>
#include <complex>
#include <string>

#include "runtime/kernels/element_access.h"

namespace kiln::runtime {
namespace {

struct MathOp {
  std::string_view target;
  double (*real)(double);
  std::complex<double> (*complex)(const std::complex<double>&);
};

template <const MathOp& kOp>
Result<hlo::Literal> EvalMath(const hlo::Instruction& instr, const hlo::Literal& operand) {
  const hlo::Shape& shape = instr.shape();
  const hlo::PrimitiveType type = operand.shape().element_type();
  const ComputeType compute = ComputeTypeFor(type);
  const bool is_complex = compute == ComputeType::kC64 || compute == ComputeType::kC128;
  if ((!is_complex && compute != ComputeType::kF32 && compute != ComputeType::kF64) ||
      operand.elided() || !shape.IsArray() || shape.element_type() != type ||
      shape.dimensions() != operand.shape().dimensions()) {
    return InvalidArgumentError("instruction %" + std::string(instr.name()) + ": custom-call \"" +
                                std::string(kOp.target) +
                                "\" needs a floating-point or complex array and a result of its shape");
  }
  hlo::Literal out(shape);
  for (int64_t i = 0; i < operand.element_count(); ++i) {
    if (is_complex) {
      SetElementFrom(out, i, kOp.complex(GetElementAs<std::complex<double>>(operand, i)));
    } else {
      SetElementFrom(out, i, kOp.real(GetElementAs<double>(operand, i)));
    }
  }
  return out;
}

double Cosh(double x) { return std::cosh(x); }
double Acosh(double x) { return std::acosh(x); }
double Asin(double x) { return std::asin(x); }
double Asinh(double x) { return std::asinh(x); }
double Atan(double x) { return std::atan(x); }
double Acos(double x) { return std::acos(x); }
std::complex<double> CCosh(const std::complex<double>& x) { return std::cosh(x); }
std::complex<double> CAcosh(const std::complex<double>& x) { return std::acosh(x); }
std::complex<double> CAsin(const std::complex<double>& x) { return std::asin(x); }
std::complex<double> CAsinh(const std::complex<double>& x) { return std::asinh(x); }
std::complex<double> CAtan(const std::complex<double>& x) { return std::atan(x); }
std::complex<double> CAcos(const std::complex<double>& x) { return std::acos(x); }

constexpr MathOp kCosh{"xla_builder.math.Cosh", &Cosh, &CCosh};
constexpr MathOp kAcosh{"xla_builder.math.Acosh", &Acosh, &CAcosh};
constexpr MathOp kAsin{"xla_builder.math.Asin", &Asin, &CAsin};
constexpr MathOp kAsinh{"xla_builder.math.Asinh", &Asinh, &CAsinh};
constexpr MathOp kAtan{"xla_builder.math.Atan", &Atan, &CAtan};
constexpr MathOp kAcos{"xla_builder.math.Acos", &Acos, &CAcos};

struct Entry {
  const MathOp* op;
  MathCustomCallFn fn;
};
constexpr Entry kTable[] = {
    {&kCosh, &EvalMath<kCosh>},   {&kAcosh, &EvalMath<kAcosh>}, {&kAsin, &EvalMath<kAsin>},
    {&kAsinh, &EvalMath<kAsinh>}, {&kAtan, &EvalMath<kAtan>},   {&kAcos, &EvalMath<kAcos>},
};

}  // namespace

MathCustomCallFn FindMathCustomCall(std::string_view target) {
  for (const Entry& e : kTable) {
    if (e.op->target == target) return e.fn;
  }
  return nullptr;
}

}  // namespace kiln::runtime
