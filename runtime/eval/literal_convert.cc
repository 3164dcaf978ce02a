#include "runtime/eval/literal_convert.h"

#include <string>

#include "runtime/eval/elementwise_kernel.h"

namespace kiln::runtime {

Result<hlo::Literal> ConvertLiteral(const hlo::Literal& in, hlo::PrimitiveType to) {
  const hlo::PrimitiveType from = in.shape().element_type();
  if (!in.shape().IsArray() || in.elided()) {
    return InvalidArgumentError("can only convert an array with data, got " + in.shape().ToString());
  }
  ElementwiseFn convert = elementwise_internal::ResolveConvert(from, to);
  if (convert == nullptr) {
    return UnimplementedError("no conversion from " + std::string(hlo::PrimitiveTypeName(from)) + " to " +
                     std::string(hlo::PrimitiveTypeName(to)));
  }
  hlo::Shape shape = in.shape();
  shape.set_element_type(to);
  hlo::Literal out = hlo::Literal::Uninitialized(std::move(shape));
  ElementwiseArgs args;
  args.in[0] = in.data().data();
  args.out = out.mutable_data().data();
  args.n = in.element_count();
  convert(args, ElementwiseParams{});
  return out;
}

}  // namespace kiln::runtime
