#include "compiler/passes/convolution_layout.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/opcode.h"
#include "compiler/passes/layout_groups.h"
#include "runtime/chip/memory_tiles.h"

namespace kiln::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Elements the memory tiles hold for `shape` under its layout.
int64_t PaddedElements(const hlo::Shape& shape) {
  const std::vector<int64_t> tiled = runtime::TiledDimensions(shape);
  int64_t elements = 1;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (std::find(tiled.begin(), tiled.end(), d) == tiled.end()) elements *= shape.dimensions(d);
  }
  if (tiled.size() == 2) {
    elements *= runtime::RoundUp(shape.dimensions(tiled[0]), runtime::SublaneTile(shape.element_type()));
  }
  if (!tiled.empty()) elements *= runtime::RoundUp(shape.dimensions(tiled.back()), runtime::kLanes);
  return elements;
}

// The dimension the lanes of `shape`'s memory tiles run along: the first
// of its minor_to_major that holds data.
int64_t MinorDimension(const hlo::Shape& shape) {
  const std::vector<int64_t> tiled = runtime::TiledDimensions(shape);
  return tiled.empty() ? -1 : tiled.back();
}

}  // namespace

std::vector<int64_t> FeatureMinorLayout(const hlo::Shape& shape, int64_t feature, int64_t batch) {
  std::vector<int64_t> spatial;  // logical order
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (d != feature && d != batch) spatial.push_back(d);
  }
  // minor_to_major: feature, batch, then the spatial dimensions minor first.
  std::vector<int64_t> batch_second = {feature, batch};
  batch_second.insert(batch_second.end(), spatial.rbegin(), spatial.rend());
  if (spatial.empty()) return batch_second;
  // feature, the most minor spatial dimension, the other spatial ones, batch.
  std::vector<int64_t> spatial_second = {feature};
  spatial_second.insert(spatial_second.end(), spatial.rbegin(), spatial.rend());
  spatial_second.push_back(batch);

  auto padded = [&](const std::vector<int64_t>& minor_to_major) {
    hlo::Shape laid = shape;
    laid.mutable_layout().minor_to_major = minor_to_major;
    return PaddedElements(laid);
  };
  return padded(spatial_second) < padded(batch_second) ? spatial_second : batch_second;
}

Result<bool> AssignConvolutionLayouts(hlo::Computation& computation) {
  std::vector<Instruction*> order;
  std::vector<Instruction*> convolutions;
  for (const auto& instr : computation.instructions()) {
    order.push_back(instr.get());
    if (instr->opcode() == Opcode::kConvolution && IsLaidOutArray(instr->shape()) &&
        IsLaidOutArray(instr->operand(0)->shape())) {
      convolutions.push_back(instr.get());
    }
  }
  if (convolutions.empty()) return false;

  LayoutGroups groups(computation);

  // Each group's layout: its first convolution's.
  std::unordered_map<const Instruction*, std::vector<int64_t>> wanted;
  std::unordered_map<const Instruction*, std::vector<int64_t>> input_layouts;  // per convolution
  for (const Instruction* conv : convolutions) {
    auto numbers = hlo::GetConvolutionDimensionNumbers(*conv);
    if (!numbers) continue;  // the verifier checked them; nothing to lay out
    const hlo::Shape& input = conv->operand(0)->shape();
    std::vector<int64_t> in = FeatureMinorLayout(input, numbers->input_feature_dimension,
                                                 numbers->input_batch_dimension);
    std::vector<int64_t> out = FeatureMinorLayout(conv->shape(), numbers->output_feature_dimension,
                                                  numbers->output_batch_dimension);
    wanted.try_emplace(groups.Find(conv), std::move(out));
    wanted.try_emplace(groups.Find(conv->operand(0)), in);
    input_layouts[conv] = std::move(in);
  }

  bool changed = false;
  for (Instruction* value : order) {
    auto it = wanted.find(groups.Find(value));
    if (it == wanted.end() || !LayoutAssignable(*value, computation)) continue;
    if (value->shape().layout().minor_to_major == it->second) continue;
    hlo::Shape shape = value->shape();
    shape.mutable_layout().minor_to_major = it->second;
    value->set_shape(std::move(shape));
    changed = true;
  }

  // Pinned inputs in another layout: one copy per value and layout. A value
  // the pass laid out for another convolution (a weight gradient reads the
  // forward activations with the batch as its feature) is read as it lies.
  std::map<std::pair<const Instruction*, std::vector<int64_t>>, Instruction*> copies;
  std::unordered_set<std::string> names;
  for (const auto& instr : computation.instructions()) names.emplace(instr->name());
  for (Instruction* conv : convolutions) {
    auto layout = input_layouts.find(conv);
    if (layout == input_layouts.end()) continue;
    Instruction* input = conv->operand(0);
    if (input->shape().layout().minor_to_major == layout->second || !LayoutPinned(*input, computation)) continue;
    // A pinned input whose features are already minor is read as it lies
    // (NHWC parameters): the feature vectors the rows need are whole.
    if (MinorDimension(input->shape()) == layout->second.front()) continue;
    Instruction*& copy = copies[{input, layout->second}];
    if (copy == nullptr) {
      hlo::Shape shape = input->shape();
      shape.mutable_layout().minor_to_major = layout->second;
      std::string name = std::string(input->name()) + ".feature_minor";
      for (int k = 1; names.contains(name); ++k)
        name = std::string(input->name()) + ".feature_minor." + std::to_string(k);
      names.insert(name);
      auto made = Instruction::Create(Opcode::kCopy, std::move(shape), {input}, name);
      made->set_source_line(conv->source_line());
      copy = computation.AddInstruction(std::move(made));
    }
    KILN_RETURN_IF_ERROR(conv->ReplaceOperandWith(0, copy));
    changed = true;
  }
  return changed;
}

}  // namespace kiln::passes
