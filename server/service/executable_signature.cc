#include "server/service/executable_signature.h"

namespace kiln::service {

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

}  // namespace kiln::service
