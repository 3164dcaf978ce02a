#include "runtime/eval/value.h"

#include <utility>

namespace kiln::runtime {

Value Value::Own(hlo::Literal literal) {
  Value v;
  v.array_ = std::make_shared<hlo::Literal>(std::move(literal));
  return v;
}

Value Value::Borrow(const hlo::Literal& literal) {
  if (literal.shape().IsTuple()) {
    std::vector<Value> elements;
    elements.reserve(literal.tuple_elements().size());
    for (const hlo::Literal& e : literal.tuple_elements()) elements.push_back(Borrow(e));
    return Tuple(std::move(elements));
  }
  Value v;
  // An aliasing pointer with no control block: use_count() is 0, so
  // TakeLiteral copies instead of moving the caller's literal.
  v.array_ = std::shared_ptr<hlo::Literal>(std::shared_ptr<void>(),
                                           const_cast<hlo::Literal*>(&literal));
  return v;
}

Value Value::Tuple(std::vector<Value> elements) {
  Value v;
  v.tuple_ = std::make_shared<const std::vector<Value>>(std::move(elements));
  return v;
}

Value Value::WithDynamicSizes(std::vector<int64_t> sizes) const {
  Value v = *this;
  v.dynamic_sizes_ = std::move(sizes);
  return v;
}

hlo::Literal Value::TakeLiteral() && {
  if (is_tuple()) {
    if (tuple_.use_count() == 1) {
      auto& elements = const_cast<std::vector<Value>&>(*tuple_);
      std::vector<hlo::Literal> literals;
      literals.reserve(elements.size());
      for (Value& e : elements) literals.push_back(std::move(e).TakeLiteral());
      return hlo::Literal::Tuple(std::move(literals));
    }
    return ToLiteral();
  }
  if (array_ == nullptr) return hlo::Literal();
  if (array_.use_count() == 1) return std::move(*array_);
  return *array_;
}

hlo::Literal Value::ToLiteral() const {
  if (is_tuple()) {
    std::vector<hlo::Literal> literals;
    literals.reserve(tuple_->size());
    for (const Value& e : *tuple_) literals.push_back(e.ToLiteral());
    return hlo::Literal::Tuple(std::move(literals));
  }
  if (array_ == nullptr) return hlo::Literal();
  return *array_;
}

}  // namespace kiln::runtime
