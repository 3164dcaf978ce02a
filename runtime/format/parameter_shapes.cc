#include "runtime/format/parameter_shapes.h"

#include <map>
#include <optional>
#include <string>

#include "compiler/hlo/parser.h"

namespace kiln::runtime {
namespace {

// One parameter's arrays by index path, as the executable lists them.
struct ShapeTree {
  std::optional<hlo::Shape> array;
  std::map<int64_t, ShapeTree> elements;
};

Result<hlo::Shape> BuildShape(const ShapeTree& tree, const std::string& where) {
  if (tree.array) return *tree.array;
  std::vector<hlo::Shape> elements;
  for (const auto& [index, element] : tree.elements) {
    if (index != static_cast<int64_t>(elements.size())) {
      return UnimplementedError(where + " element " + std::to_string(elements.size()) + " holds no array");
    }
    KILN_ASSIGN_OR_RETURN(hlo::Shape shape, BuildShape(element, where + " element " + std::to_string(index)));
    elements.push_back(std::move(shape));
  }
  return hlo::Shape::Tuple(std::move(elements));
}

}  // namespace

Result<std::vector<hlo::Shape>> ProgramParameterShapes(const Program& program) {
  std::map<int32_t, ShapeTree> trees;
  for (uint32_t b : program.parameters) {
    if (b >= program.buffers.size())
      return DataLossError("executable parameter buffer " + std::to_string(b) + " is out of range");
    const ProgramBuffer& buffer = program.buffers[b];
    KILN_ASSIGN_OR_RETURN(hlo::Shape shape, hlo::ParseShape(buffer.shape));
    ShapeTree* node = &trees[buffer.parameter_number];
    for (int64_t index : buffer.parameter_path) node = &node->elements[index];
    node->array = std::move(shape);
  }
  std::vector<hlo::Shape> shapes;
  for (const auto& [number, tree] : trees) {
    std::string where = "executable parameter " + std::to_string(shapes.size());
    if (number != static_cast<int32_t>(shapes.size())) {
      return UnimplementedError(where + " holds no array (a token or an empty tuple); run the HLO text instead");
    }
    KILN_ASSIGN_OR_RETURN(hlo::Shape shape, BuildShape(tree, where));
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

}  // namespace kiln::runtime
