#include "runtime/io/tensor_names.h"

#include <set>

#include "base/str_cat.h"

namespace kiln::runtime::io {
namespace {

std::string ChildName(const std::string& prefix, size_t i) {
  return prefix.empty() ? std::to_string(i) : StrCat(prefix, ".", i);
}

void Flatten(const hlo::Literal& value, const std::string& name, std::vector<NamedTensor>& out) {
  if (!value.shape().IsTuple()) {
    out.push_back({name, value});
    return;
  }
  for (size_t i = 0; i < value.tuple_elements().size(); ++i) {
    Flatten(value.tuple_elements()[i], ChildName(name, i), out);
  }
}

// "f32[2,3]" without the layout.
std::string ShapeText(const hlo::Shape& shape) {
  hlo::Shape plain(shape.element_type(), shape.dimensions());
  return plain.ToString();
}

// `value` re-shaped as `shape` when types and dimensions agree.
Result<hlo::Literal> Conform(const hlo::Literal& value, const hlo::Shape& shape,
                             const std::string& what) {
  if (shape.IsTuple()) {
    if (!value.shape().IsTuple() || value.tuple_elements().size() != shape.tuple_shapes().size()) {
      return InvalidArgumentError(StrCat(what, " must be a tuple of ", shape.tuple_shapes().size(), " elements, got ",
                                         value.shape().ToString()));
    }
    std::vector<hlo::Literal> elements;
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
      KILN_ASSIGN_OR_RETURN(
          hlo::Literal element,
          Conform(value.tuple_elements()[i], shape.tuple_shapes(i), StrCat(what, " element ", i)));
      elements.push_back(std::move(element));
    }
    return hlo::Literal::Tuple(std::move(elements));
  }
  if (value.shape().IsTuple() || value.shape().element_type() != shape.element_type() ||
      value.shape().dimensions() != shape.dimensions()) {
    return InvalidArgumentError(StrCat(what, " must be ", ShapeText(shape), ", got ",
                                       value.shape().IsTuple() ? value.shape().ToString() : ShapeText(value.shape())));
  }
  if (value.elided()) return InvalidArgumentError(StrCat(what, " has no data ({...})"));
  return hlo::Literal::FromData(shape, value.data());
}

Result<hlo::Literal> FromTensors(const SafetensorsFile& file, const hlo::Shape& shape,
                                 const std::string& name, int64_t parameter,
                                 std::set<std::string>& used) {
  if (shape.IsTuple()) {
    std::vector<hlo::Literal> elements;
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
      KILN_ASSIGN_OR_RETURN(hlo::Literal element, FromTensors(file, shape.tuple_shapes(i),
                                                              ChildName(name, i), parameter, used));
      elements.push_back(std::move(element));
    }
    return hlo::Literal::Tuple(std::move(elements));
  }
  const hlo::Literal* tensor = file.Find(name);
  if (tensor == nullptr) {
    return InvalidArgumentError(StrCat("parameter ", parameter, " needs a tensor named \"", name, "\" (",
                                       ShapeText(shape), "); the inputs have none"));
  }
  used.insert(name);
  return Conform(*tensor, shape, StrCat("parameter ", parameter, " tensor \"", name, "\""));
}

}  // namespace

std::vector<NamedTensor> OutputTensors(const hlo::Literal& result) {
  std::vector<NamedTensor> out;
  if (result.shape().IsTuple()) {
    Flatten(result, "", out);
  } else {
    out.push_back({"0", result});
  }
  return out;
}

Result<std::vector<hlo::Literal>> ArgumentsFromTensors(
    const SafetensorsFile& file, std::span<const hlo::Shape> parameter_shapes) {
  std::vector<hlo::Literal> args;
  std::set<std::string> used;
  for (size_t i = 0; i < parameter_shapes.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(hlo::Literal arg,
                          FromTensors(file, parameter_shapes[i], std::to_string(i), i, used));
    args.push_back(std::move(arg));
  }
  for (const NamedTensor& tensor : file.tensors) {
    if (!used.contains(tensor.name)) {
      return InvalidArgumentError(StrCat("input tensor \"", tensor.name, "\" matches no parameter (the module has ",
                                         parameter_shapes.size(), ")"));
    }
  }
  return args;
}

Result<std::vector<hlo::Literal>> MatchArguments(std::vector<hlo::Literal> args,
                                                 std::span<const hlo::Shape> parameter_shapes) {
  if (args.size() != parameter_shapes.size()) {
    return InvalidArgumentError(
        StrCat("the module has ", parameter_shapes.size(), " parameters, got ", args.size(), " arguments"));
  }
  std::vector<hlo::Literal> out;
  for (size_t i = 0; i < args.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(hlo::Literal arg,
                          Conform(args[i], parameter_shapes[i], StrCat("parameter ", i)));
    out.push_back(std::move(arg));
  }
  return out;
}

}  // namespace kiln::runtime::io
