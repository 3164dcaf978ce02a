#include "server/executable_signature.h"

#include <map>

#include "compiler/hlo/parser.h"

namespace kiln::server {
namespace {

struct ShapeTree {
  std::optional<hlo::Shape> array;
  std::map<int64_t, ShapeTree> elements;
};

Result<hlo::Shape> BuildShape(const ShapeTree& tree, const std::string& where) {
  if (tree.array) return *tree.array;
  std::vector<hlo::Shape> elements;
  for (const auto& [index, element] : tree.elements) {
    if (index != static_cast<int64_t>(elements.size())) {
      return MakeError(where + " element " + std::to_string(elements.size()) + " holds no array");
    }
    KILN_ASSIGN_OR_RETURN(hlo::Shape shape, BuildShape(element, where + " element " + std::to_string(index)));
    elements.push_back(std::move(shape));
  }
  return hlo::Shape::Tuple(std::move(elements));
}

}  // namespace

Result<std::vector<hlo::Shape>> ExecutableParameterShapes(const runtime::Program& program) {
  std::map<int32_t, ShapeTree> trees;
  for (uint32_t b : program.parameters) {
    if (b >= program.buffers.size()) return MakeError("executable parameter buffer " + std::to_string(b) + " is out of range");
    const runtime::ProgramBuffer& buffer = program.buffers[b];
    KILN_ASSIGN_OR_RETURN(hlo::Shape shape, hlo::ParseShape(buffer.shape));
    ShapeTree* node = &trees[buffer.parameter_number];
    for (int64_t index : buffer.parameter_path) node = &node->elements[index];
    node->array = std::move(shape);
  }
  std::vector<hlo::Shape> shapes;
  for (const auto& [number, tree] : trees) {
    std::string where = "executable parameter " + std::to_string(shapes.size());
    if (number != static_cast<int32_t>(shapes.size())) {
      return MakeError(where + " holds no array (a token or an empty tuple); it cannot be run here");
    }
    KILN_ASSIGN_OR_RETURN(hlo::Shape shape, BuildShape(tree, where));
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

std::string PlainShapeText(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    std::string text = "(";
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
      if (i > 0) text += ", ";
      text += PlainShapeText(shape.tuple_shapes(i));
    }
    return text + ")";
  }
  return hlo::Shape(shape.element_type(), shape.dimensions()).ToString();
}

}  // namespace kiln::server
