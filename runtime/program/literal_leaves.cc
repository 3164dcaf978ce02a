#include "runtime/program/literal_leaves.h"

#include <string>

namespace kiln::runtime {
namespace {

void CollectLeaves(const hlo::Shape& shape, std::vector<const hlo::Shape*>& out) {
  if (!shape.IsTuple()) {
    out.push_back(&shape);
    return;
  }
  for (const hlo::Shape& element : shape.tuple_shapes()) CollectLeaves(element, out);
}

}  // namespace

bool ValueFitsShape(const hlo::Shape& value, const hlo::Shape& declared) {
  if (value.IsTuple() || declared.IsTuple()) return value.Compatible(declared);
  if (value.element_type() != declared.element_type()) return false;
  if (value.dimensions().size() != declared.dimensions().size()) return false;
  for (size_t i = 0; i < value.dimensions().size(); ++i) {
    const int64_t got = value.dimensions()[i];
    const int64_t bound = declared.dimensions()[i];
    if (declared.is_dynamic_dimension(static_cast<int64_t>(i)) ? got > bound : got != bound) {
      return false;
    }
  }
  return true;
}

std::vector<const hlo::Shape*> ShapeLeaves(const hlo::Shape& shape) {
  std::vector<const hlo::Shape*> out;
  CollectLeaves(shape, out);
  return out;
}

void FlattenLiteral(hlo::Literal literal, std::vector<hlo::Literal>& out) {
  if (!literal.shape().IsTuple()) {
    out.push_back(std::move(literal));
    return;
  }
  for (hlo::Literal& element : literal.ReleaseTupleElements()) FlattenLiteral(std::move(element), out);
}

Result<hlo::Literal> AssembleLiteral(const hlo::Shape& shape, std::vector<hlo::Literal>& leaves,
                                     size_t& next) {
  if (!shape.IsTuple()) {
    if (next >= leaves.size()) return InternalError("result has fewer arrays than its shape");
    hlo::Literal& leaf = leaves[next++];
    if (!ValueFitsShape(leaf.shape(), shape)) {
      return InternalError("result array is " + leaf.shape().ToString() + ", expected " + shape.ToString());
    }
    return std::move(leaf);
  }
  std::vector<hlo::Literal> elements;
  elements.reserve(shape.tuple_shapes().size());
  for (const hlo::Shape& element : shape.tuple_shapes()) {
    KILN_ASSIGN_OR_RETURN(hlo::Literal value, AssembleLiteral(element, leaves, next));
    elements.push_back(std::move(value));
  }
  return hlo::Literal::Tuple(std::move(elements));
}

}  // namespace kiln::runtime
