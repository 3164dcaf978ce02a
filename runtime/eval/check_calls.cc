#include "runtime/eval/check_calls.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "compiler/hlo/float_formats.h"
#include "runtime/eval/instruction_error.h"

namespace kiln::runtime {
namespace {

using hlo::PrimitiveType;

// One element's value and its bit pattern in its own format.
struct Element {
  double value = 0;
  uint64_t bits = 0;  // without the sign bit
  bool negative = false;
};

int FloatBits(PrimitiveType t) { return hlo::BitWidth(t); }

Element FloatAt(const hlo::Literal& lit, PrimitiveType t, int64_t i) {
  Element e;
  if (t == PrimitiveType::kF64) {
    const double v = lit.Get<double>(i);
    std::memcpy(&e.bits, &v, 8);
    e.value = v;
  } else if (t == PrimitiveType::kF32) {
    const float v = lit.Get<float>(i);
    uint32_t b;
    std::memcpy(&b, &v, 4);
    e.bits = b;
    e.value = v;
  } else {
    const hlo::FloatFormat* f = hlo::NarrowFloatFormat(t);
    e.bits = hlo::HostByteWidth(t) == 2 ? lit.Get<uint16_t>(i) : lit.Get<uint8_t>(i);
    e.value = f != nullptr ? hlo::DecodeNarrowFloat(*f, static_cast<uint32_t>(e.bits)) : 0;
  }
  const int bits = FloatBits(t);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  e.negative = (e.bits & sign) != 0;
  e.bits &= sign - 1;
  return e;
}

// The interpreter's ULP difference: 0 for bitwise-equal values or two NaNs,
// the distance in representable values between finite ones, and the maximum
// when one is not finite.
uint64_t UlpDifference(const Element& a, const Element& b) {
  if (a.bits == b.bits && a.negative == b.negative) return 0;
  if (std::isfinite(a.value) && std::isfinite(b.value)) {
    if (a.negative != b.negative) return a.bits + b.bits;
    return a.bits > b.bits ? a.bits - b.bits : b.bits - a.bits;
  }
  if (std::isnan(a.value) && std::isnan(b.value)) return 0;
  return std::numeric_limits<uint64_t>::max();
}

// The interpreter's approximate equality of two floats.
bool AlmostEqual(double f, double g, double tolerance) {
  if (f == g) return true;
  if (std::isnan(f) || std::isnan(g)) return std::isnan(f) && std::isnan(g);
  const bool f_nonzero_finite = std::isfinite(f) && f != 0;
  const bool g_nonzero_finite = std::isfinite(g) && g != 0;
  if (!f_nonzero_finite || !g_nonzero_finite) {
    if (f != 0 && g != 0) return false;
  }
  if (!std::isfinite(f) || !std::isfinite(g)) return false;
  if (std::signbit(f) != std::signbit(g)) return false;
  return std::fabs(f - g) <= tolerance;
}

std::string Number(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, p);
}

std::string IndexText(const hlo::Shape& shape, int64_t linear) {
  const auto& dims = shape.dimensions();
  std::vector<int64_t> index(dims.size(), 0);
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] > 0) {
      index[d] = linear % dims[d];
      linear /= dims[d];
    }
  }
  std::string out = "[";
  for (size_t d = 0; d < index.size(); ++d) {
    if (d > 0) out += ",";
    out += std::to_string(index[d]);
  }
  return out + "]";
}

// "key=value" from a backend_config such as "\"min_ulp=0 max_ulp=3\"".
double ConfigValue(const hlo::Instruction& instr, std::string_view key, double fallback) {
  const std::pmr::string* config = instr.AttributeText("backend_config");
  if (config == nullptr) return fallback;
  std::string_view text(*config);
  const size_t at = text.find(std::string(key) + "=");
  if (at == std::string_view::npos) return fallback;
  const char* begin = text.data() + at + key.size() + 1;
  double v = fallback;
  std::from_chars(begin, text.data() + text.size(), v);
  return v;
}

// The check's source line: from its metadata, or from its name
// ("check.expect_close.L11.4"), which survives where metadata does not.
int SourceLine(const hlo::Instruction& instr) {
  int line = 0;
  if (const std::pmr::string* metadata = instr.AttributeText("metadata")) {
    std::string_view text(*metadata);
    const size_t at = text.find("source_line=");
    if (at != std::string_view::npos) {
      std::from_chars(text.data() + at + 12, text.data() + text.size(), line);
      return line;
    }
  }
  std::string_view name = instr.name();
  const size_t at = name.find(".L");
  if (at != std::string_view::npos) std::from_chars(name.data() + at + 2, name.data() + name.size(), line);
  return line;
}

enum class Kind { kEq, kAlmostEq, kClose, kEqResult };

}  // namespace

void CheckRecorder::Record(CheckOutcome outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  if (outcome.passed) {
    ++passed_;
    return;
  }
  ++failed_;
  if (failures_.size() < kMaxKeptFailures) failures_.push_back(std::move(outcome));
}

int64_t CheckRecorder::passed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return passed_;
}

int64_t CheckRecorder::failed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

std::vector<CheckOutcome> CheckRecorder::failures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failures_;
}

bool IsCheckTarget(std::string_view target) {
  return target == "check.expect_eq" || target == "check.expect_almost_eq" || target == "check.expect_close" ||
         target == "check.eq";
}

Result<Value> EvalCheckCustomCall(const hlo::Instruction& instr, std::string_view target,
                                  std::span<const Value> operands, CheckRecorder* recorder) {
  if (operands.size() != 2 || operands[0].is_tuple() || operands[1].is_tuple() || operands[0].empty() ||
      operands[1].empty()) {
    return std::unexpected(InstrError(instr, std::string(target) + " takes two arrays"));
  }
  const hlo::Literal& actual = operands[0].array();
  const hlo::Literal& expected = operands[1].array();
  const PrimitiveType t = actual.shape().element_type();
  if (t != expected.shape().element_type() || actual.shape().dimensions() != expected.shape().dimensions()) {
    return std::unexpected(InstrError(instr, std::string(target) + " compares " + actual.shape().ToString() +
                                                 " with " + expected.shape().ToString()));
  }
  const Kind kind = target == "check.expect_eq"          ? Kind::kEq
                    : target == "check.expect_almost_eq" ? Kind::kAlmostEq
                    : target == "check.expect_close"     ? Kind::kClose
                                                         : Kind::kEqResult;
  const double tolerance = ConfigValue(instr, "tolerance", kind == Kind::kAlmostEq ? 0.001 : 0.0001);
  const uint64_t min_ulp = static_cast<uint64_t>(ConfigValue(instr, "min_ulp", 0));
  const uint64_t max_ulp = static_cast<uint64_t>(ConfigValue(instr, "max_ulp", 3));
  const bool is_complex = hlo::IsComplex(t);
  const PrimitiveType part = t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
  const bool is_float = hlo::IsFloatingPoint(t) || is_complex;
  const int parts = is_complex ? 2 : 1;
  const int64_t n = actual.element_count();
  const int width = hlo::HostByteWidth(t);
  // check.eq is symmetric (the quantized tests give it the expected value
  // first); the expect_* checks take the actual value first.
  const std::string first = kind == Kind::kEqResult ? "(lhs)" : "(actual)";
  const std::string second = kind == Kind::kEqResult ? "(rhs)" : "(expected)";
  std::string message;
  for (int64_t i = 0; i < n && message.empty(); ++i) {
    if (!is_float) {
      if (std::memcmp(actual.data().data() + i * width, expected.data().data() + i * width,
                      static_cast<size_t>(width)) != 0) {
        message = IndexText(actual.shape(), i) + ": " + std::to_string(static_cast<int64_t>(actual.GetAsDouble(i))) +
                  " " + first + " vs " + std::to_string(static_cast<int64_t>(expected.GetAsDouble(i))) + " " + second;
      }
      continue;
    }
    uint64_t ulp = 0;
    bool ok = true;
    std::string a_text, e_text;
    for (int p = 0; p < parts; ++p) {
      const int64_t j = i * parts + p;
      const Element a = FloatAt(actual, is_complex ? part : t, j);
      const Element e = FloatAt(expected, is_complex ? part : t, j);
      a_text += (p > 0 ? "+" : "") + Number(a.value) + (p > 0 ? "i" : "");
      e_text += (p > 0 ? "+" : "") + Number(e.value) + (p > 0 ? "i" : "");
      switch (kind) {
        // NaN equals NaN here, as the interpreter's bitwise-minded checks take it.
        case Kind::kEq: ok &= a.value == e.value || (std::isnan(a.value) && std::isnan(e.value)); break;
        case Kind::kAlmostEq:
        case Kind::kEqResult: ok &= AlmostEqual(a.value, e.value, tolerance); break;
        case Kind::kClose: ulp = std::max(ulp, UlpDifference(a, e)); break;
      }
    }
    if (kind == Kind::kClose) ok = ulp >= min_ulp && ulp <= max_ulp;
    if (!ok) {
      message = IndexText(actual.shape(), i) + ": " + a_text + " " + first + " vs " + e_text + " " + second;
      if (kind == Kind::kClose) {
        message += ", ULP difference " +
                   (ulp == std::numeric_limits<uint64_t>::max() ? std::string("max") : std::to_string(ulp)) +
                   " outside [" + std::to_string(min_ulp) + ", " + std::to_string(max_ulp) + "]";
      } else if (kind != Kind::kEq) {
        message += " beyond tolerance " + Number(tolerance);
      }
    }
  }
  const bool passed = message.empty();
  if (recorder != nullptr) {
    recorder->Record({std::string(target), std::string(instr.name()), SourceLine(instr), passed, message});
  }
  if (kind == Kind::kEqResult) {
    hlo::Literal result(hlo::Shape(PrimitiveType::kPred, {}));
    result.Set<uint8_t>(0, passed ? 1 : 0);
    return Value::Own(std::move(result));
  }
  return Value::Tuple({});
}

}  // namespace kiln::runtime
