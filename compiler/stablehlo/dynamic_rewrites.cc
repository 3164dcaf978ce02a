#include "compiler/stablehlo/dynamic_rewrites.h"

#include <optional>
#include <string>
#include <vector>

#include "compiler/hlo/attribute.h"
#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/shape_inference.h"
#include "compiler/stablehlo/dynamic_ops.h"
#include "compiler/stablehlo/window_text.h"

namespace kiln::stablehlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

// Sizes past this are refused rather than planned.
constexpr int64_t kMaxDimension = int64_t{1} << 40;

// Whether `a` and `b` compute the same value: the same instruction, or the
// same opcode, shape, attributes and (recursively, a few levels deep)
// operands. Parameters and other leaves must be the same instruction.
bool SameValue(const Instruction* a, const Instruction* b, int depth = 8) {
  if (a == b) return true;
  if (depth == 0 || a->opcode() != b->opcode() || !(a->shape() == b->shape()) ||
      a->operand_count() != b->operand_count() || a->attributes().size() != b->attributes().size()) {
    return false;
  }
  if (a->opcode() == Opcode::kParameter || !a->called_computations().empty()) return false;
  if (a->opcode() == Opcode::kConstant) return a->literal() != nullptr && b->literal() != nullptr && *a->literal() == *b->literal();
  for (size_t i = 0; i < a->attributes().size(); ++i) {
    const hlo::Attribute& x = a->attributes()[i];
    const hlo::Attribute& y = b->attributes()[i];
    if (x.name != y.name || x.value != y.value || x.kind != y.kind) return false;
  }
  for (int64_t i = 0; i < a->operand_count(); ++i) {
    if (!SameValue(a->operand(i), b->operand(i), depth - 1)) return false;
  }
  return true;
}

class Rewrite {
 public:
  Rewrite(HloEmitter& emit, const Instruction& call, const ValueLookup& known) : emit_(emit), call_(call), known_(known) {
    for (const Instruction* o : call.operands()) values_.push_back(known(o));
  }

  Result<Instruction*> Run() {
    KILN_ASSIGN_OR_RETURN(target_, hlo::GetStringAttribute(call_, "custom_call_target"));
    if (call_.FindAttribute("backend_config") != nullptr) {
      KILN_ASSIGN_OR_RETURN(std::string text, hlo::GetStringAttribute(call_, "backend_config"));
      config_ = ParseConfigPairs(text);
    }
    if (target_ == kDynamicBroadcastInDimTarget) return Broadcast();
    if (target_ == kDynamicReshapeTarget) return Reshape();
    if (target_ == kDynamicIotaTarget) return Iota();
    if (target_ == kRealDynamicSliceTarget) return Slice();
    if (target_ == kDynamicPadTarget) return Pad();
    if (target_ == kDynamicGatherTarget) return Gather();
    if (target_ == kDynamicConvTarget) return Convolution();
    return Fail("is not a dynamic-shape op");
  }

 private:
  Error Fail(const std::string& why) const {
    return InvalidArgumentError("%" + std::string(call_.name()) + " (" + target_ + "): " + why);
  }

  Status NeedOperands(int64_t n) const {
    if (call_.operand_count() != n || static_cast<int64_t>(values_.size()) != n) {
      return Fail("expected " + std::to_string(n) + " operands");
    }
    return Ok();
  }

  // The known value of shape operand i, as a list of `length` integers
  // (any length when negative).
  Result<std::vector<int64_t>> Known(int64_t i, std::string_view what, int64_t length = -1) const {
    const IntTensor* v = values_[i];
    if (v == nullptr) {
      return Fail("its " + std::string(what) + " (operand " + std::to_string(i) + ", %" +
                  std::string(call_.operand(i)->name()) +
                  ") is not known before running: it depends on a value the program computes or on an "
                  "argument whose value was not given");
    }
    if (length >= 0 && static_cast<int64_t>(v->values.size()) != length) {
      return Fail("its " + std::string(what) + " has " + std::to_string(v->values.size()) + " values, not " +
                  std::to_string(length));
    }
    return v->values;
  }

  Result<Shape> ShapeFromSizes(const std::vector<int64_t>& sizes) const {
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] < 0 || sizes[d] > kMaxDimension) {
        return Fail("dimension " + std::to_string(d) + " would have size " + std::to_string(sizes[d]));
      }
    }
    return Shape(call_.shape().element_type(), sizes);
  }

  std::string ConfigValue(std::string_view name) const {
    for (const auto& [key, value] : config_) {
      if (key == name) return value;
    }
    return "";
  }

  Result<std::vector<int64_t>> ConfigList(std::string_view name) const {
    Result<std::vector<int64_t>> list = hlo::DecodeIntList(ConfigValue(name));
    if (!list) return Fail("bad " + std::string(name) + " in its backend_config");
    return list;
  }

  // An instruction made with `call_`'s declared shape, its shape then
  // inferred from operands and attributes.
  Result<Instruction*> Inferred(Instruction* instr) const {
    Result<Shape> shape = hlo::InferInstructionShape(*instr, &call_.shape());
    if (!shape) return Fail(shape.error().message);
    instr->set_shape(*shape);
    return instr;
  }

  Result<Instruction*> Broadcast() {
    KILN_RETURN_IF_ERROR(NeedOperands(2));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, Known(1, "output_dimensions", call_.shape().rank()));
    KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromSizes(sizes));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ConfigList("dimensions"));
    Result<Instruction*> b = emit_.BroadcastInDim(call_.operand(0), shape, dims);
    if (!b) return Fail(b.error().message);
    return b;
  }

  Result<Instruction*> Reshape() {
    KILN_RETURN_IF_ERROR(NeedOperands(2));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, Known(1, "output_shape", call_.shape().rank()));
    KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromSizes(sizes));
    const Shape& in = call_.operand(0)->shape();
    if (!in.is_static() || in.ElementCount() != shape.ElementCount()) {
      return Fail("cannot reshape " + in.ToString() + " to " + shape.ToString());
    }
    return emit_.Reshape(call_.operand(0), shape);
  }

  Result<Instruction*> Iota() {
    KILN_RETURN_IF_ERROR(NeedOperands(1));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, Known(0, "output_shape", call_.shape().rank()));
    KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromSizes(sizes));
    Instruction* iota = emit_.Add(Opcode::kIota, std::move(shape), {});
    HloEmitter::SetAttr(iota, "iota_dimension", ConfigValue("iota_dimension"));
    return iota;
  }

  // `limit = start + sizes` with known sizes: a slice of runtime starts,
  // as XLA legalizes real_dynamic_slice to dynamic_slice.
  std::optional<std::vector<int64_t>> SizesPastStart() const {
    const Instruction* start = call_.operand(1);
    const Instruction* limit = call_.operand(2);
    if (limit->opcode() != Opcode::kAdd || values_[3] == nullptr) return std::nullopt;
    for (int64_t stride : values_[3]->values) {
      if (stride != 1) return std::nullopt;
    }
    for (int side = 0; side < 2; ++side) {
      const Instruction* same = limit->operand(side);
      const Instruction* sizes = limit->operand(1 - side);
      if (!SameValue(same, start)) continue;
      if (const IntTensor* v = known_(sizes)) return v->values;
    }
    return std::nullopt;
  }

  Result<Instruction*> SliceAtRuntimeStarts(const std::vector<int64_t>& sizes) {
    const Shape& in = call_.operand(0)->shape();
    Instruction* start = call_.operand(1);
    const hlo::PrimitiveType index_type = start->shape().element_type();
    std::vector<Instruction*> operands = {call_.operand(0)};
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (in.is_dynamic_dimension(d) || sizes[d] < 0 || sizes[d] > in.dimensions(d)) {
        return Fail("a slice of size " + std::to_string(sizes[d]) + " does not fit dimension " + std::to_string(d) +
                    " of " + in.ToString());
      }
      Instruction* one = emit_.Add(Opcode::kSlice, Shape(index_type, {1}), {start});
      HloEmitter::SetAttr(one, "slice", "{[" + std::to_string(d) + ":" + std::to_string(d + 1) + "]}");
      operands.push_back(emit_.Reshape(one, Shape(index_type, {})));
    }
    Instruction* s = emit_.Add(Opcode::kDynamicSlice, Shape(in.element_type(), sizes), operands);
    HloEmitter::SetAttr(s, "dynamic_slice_sizes", IntListText(sizes));
    return s;
  }

  Result<Instruction*> Slice() {
    KILN_RETURN_IF_ERROR(NeedOperands(4));
    const Shape& in = call_.operand(0)->shape();
    const int64_t rank = in.rank();
    if (values_[1] == nullptr) {
      std::optional<std::vector<int64_t>> sizes = SizesPastStart();
      if (sizes && static_cast<int64_t>(sizes->size()) == rank) return SliceAtRuntimeStarts(*sizes);
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> starts, Known(1, "start_indices", rank));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> limits, Known(2, "limit_indices", rank));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> strides, Known(3, "strides", rank));
    std::string text = "{";
    for (int64_t d = 0; d < rank; ++d) {
      if (in.is_dynamic_dimension(d) || starts[d] < 0 || starts[d] > limits[d] || limits[d] > in.dimensions(d) ||
          strides[d] < 1) {
        return Fail("slice [" + std::to_string(starts[d]) + ":" + std::to_string(limits[d]) + ":" +
                    std::to_string(strides[d]) + "] does not fit dimension " + std::to_string(d) + " of " +
                    in.ToString());
      }
      if (d > 0) text += ',';
      text += "[" + std::to_string(starts[d]) + ":" + std::to_string(limits[d]);
      if (strides[d] != 1) text += ":" + std::to_string(strides[d]);
      text += "]";
    }
    text += "}";
    Instruction* s = emit_.Add(Opcode::kSlice, call_.shape(), {call_.operand(0)});
    HloEmitter::SetAttr(s, "slice", text);
    return Inferred(s);
  }

  Result<Instruction*> Pad() {
    KILN_RETURN_IF_ERROR(NeedOperands(5));
    const int64_t rank = call_.operand(0)->shape().rank();
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> low, Known(2, "edge_padding_low", rank));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> high, Known(3, "edge_padding_high", rank));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> interior, Known(4, "interior_padding", rank));
    std::string text;
    for (int64_t d = 0; d < rank; ++d) {
      if (interior[d] < 0 || std::abs(low[d]) > kMaxDimension || std::abs(high[d]) > kMaxDimension ||
          interior[d] > kMaxDimension) {
        return Fail("padding of dimension " + std::to_string(d) + " is out of range");
      }
      if (d > 0) text += 'x';
      text += std::to_string(low[d]) + "_" + std::to_string(high[d]);
      if (interior[d] != 0) text += "_" + std::to_string(interior[d]);
    }
    Instruction* p = emit_.Add(Opcode::kPad, call_.shape(), {call_.operand(0), call_.operand(1)});
    HloEmitter::SetAttr(p, "padding", text.empty() ? "{}" : text);
    return Inferred(p);
  }

  Result<Instruction*> Gather() {
    KILN_RETURN_IF_ERROR(NeedOperands(3));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, Known(2, "slice_sizes", call_.operand(0)->shape().rank()));
    Instruction* g = emit_.Add(Opcode::kGather, call_.shape(), {call_.operand(0), call_.operand(1)});
    for (const auto& [name, value] : config_) HloEmitter::SetAttr(g, name, value);
    HloEmitter::SetAttr(g, "slice_sizes", IntListText(sizes));
    return Inferred(g);
  }

  Result<Instruction*> Convolution() {
    KILN_RETURN_IF_ERROR(NeedOperands(3));
    convert_internal::WindowSpec w;
    KILN_ASSIGN_OR_RETURN(w.sizes, ConfigList("window_sizes"));
    KILN_ASSIGN_OR_RETURN(w.strides, ConfigList("window_strides"));
    KILN_ASSIGN_OR_RETURN(w.lhs_dilation, ConfigList("lhs_dilation"));
    KILN_ASSIGN_OR_RETURN(w.rhs_dilation, ConfigList("rhs_dilation"));
    KILN_ASSIGN_OR_RETURN(w.reversal, ConfigList("window_reversal"));
    const int64_t n = static_cast<int64_t>(w.sizes.size());
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pads, Known(2, "padding", 2 * n));
    for (int64_t i = 0; i < n; ++i) {
      w.pad_low.push_back(pads[2 * i]);
      w.pad_high.push_back(pads[2 * i + 1]);
    }
    Instruction* conv =
        emit_.Add(Opcode::kConvolution, call_.shape(), {call_.operand(0), call_.operand(1)}, "convolution");
    if (n > 0) HloEmitter::SetAttr(conv, "window", convert_internal::WindowText(w));
    for (const auto& [name, value] : config_) {
      if (!name.starts_with("window_") && name != "lhs_dilation" && name != "rhs_dilation") {
        HloEmitter::SetAttr(conv, name, value);
      }
    }
    return Inferred(conv);
  }

  HloEmitter& emit_;
  const Instruction& call_;
  const ValueLookup& known_;
  std::vector<const IntTensor*> values_;
  std::string target_;
  ConfigPairs config_;
};

}  // namespace

Result<Instruction*> RewriteDynamicCall(HloEmitter& emit, const Instruction& call, const ValueLookup& known) {
  return Rewrite(emit, call, known).Run();
}

}  // namespace kiln::stablehlo
