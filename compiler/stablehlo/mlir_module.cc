#include "compiler/stablehlo/mlir_module.h"

#include "compiler/stablehlo/mlir_types_text.h"

namespace kiln::stablehlo {
namespace {

// A string equal for structurally equal types, to intern them by.
// Raw bytes of the value: keys only need to be distinct, not readable.
template <typename T>
void AppendRaw(T v, std::string& key) {
  key.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

void AppendKey(const TypeInfo& t, std::string& key) {
  key.reserve(16 + 8 * (t.dims.size() + t.bounds.size()) + 4 * (t.members.size() + t.results.size()) +
              t.unsupported_element.size());
  key.push_back(static_cast<char>('a' + static_cast<int>(t.kind)));
  key.push_back(static_cast<char>(t.element));
  key.push_back(t.is_index ? 'i' : '-');
  key.push_back(t.unranked ? 'u' : 'r');
  AppendRaw(t.quant, key);
  // Counts first, so that the lists cannot run into each other.
  AppendRaw(static_cast<uint32_t>(t.unsupported_element.size()), key);
  key += t.unsupported_element;
  AppendRaw(static_cast<uint32_t>(t.dims.size()), key);
  for (int64_t d : t.dims) AppendRaw(d, key);
  AppendRaw(static_cast<uint32_t>(t.bounds.size()), key);
  for (int64_t b : t.bounds) AppendRaw(b, key);
  AppendRaw(static_cast<uint32_t>(t.members.size()), key);
  for (TypeId m : t.members) AppendRaw(m, key);
  AppendRaw(static_cast<uint32_t>(t.results.size()), key);
  for (TypeId r : t.results) AppendRaw(r, key);
}

}  // namespace

TypeId TypeTable::Intern(TypeInfo info) {
  std::string key;
  AppendKey(info, key);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  const TypeId id = static_cast<TypeId>(types_.size());
  types_.push_back(std::move(info));
  index_.emplace(std::move(key), id);
  return id;
}

TypeId TypeTable::Tensor(hlo::PrimitiveType element, std::vector<int64_t> dims) {
  TypeInfo t;
  t.kind = TypeKind::kTensor;
  t.element = element;
  t.dims = std::move(dims);
  return Intern(std::move(t));
}

TypeId TypeTable::Scalar(hlo::PrimitiveType element) {
  TypeInfo t;
  t.kind = TypeKind::kScalar;
  t.element = element;
  return Intern(std::move(t));
}

int32_t TypeTable::InternQuant(QuantInfo q) {
  for (size_t i = 0; i < quants_.size(); ++i) {
    if (quants_[i] == q) return static_cast<int32_t>(i);
  }
  quants_.push_back(std::move(q));
  return static_cast<int32_t>(quants_.size() - 1);
}

std::string TypeTable::ToString(TypeId id) const {
  if (id >= types_.size()) return "<no type>";
  std::string out;
  AppendTypeText(*this, id, out);
  return out;
}

const Attr* Attr::Field(std::string_view name) const {
  for (const NamedAttr& f : fields) {
    if (f.name == name) return f.value;
  }
  return nullptr;
}

const Attr* Operation::FindAttr(std::string_view attr_name) const {
  for (const NamedAttr& a : attrs) {
    if (a.name == attr_name) return a.value;
  }
  return nullptr;
}

Attr* MlirModule::NewAttr(Attr::Kind kind) {
  Attr& a = attrs_storage_.emplace_back();
  a.kind = kind;
  return &a;
}

Operation* MlirModule::NewOperation() { return &operations_.emplace_back(); }

std::string_view MlirModule::Intern(std::string_view text) {
  auto it = string_index_.find(text);
  if (it != string_index_.end()) return it->second;
  const std::string& stored = strings_.emplace_back(text);
  std::string_view view(stored);
  string_index_.emplace(view, view);
  return view;
}

ValueId MlirModule::NewValue(TypeId type) {
  values_.push_back(type);
  return static_cast<ValueId>(values_.size() - 1);
}

const Function* MlirModule::FindFunction(std::string_view fn_name) const {
  for (const auto& f : functions) {
    if (f->name == fn_name) return f.get();
  }
  return nullptr;
}

const Attr* MlirModule::FindModuleAttr(std::string_view attr_name) const {
  for (const NamedAttr& a : attrs) {
    if (a.name == attr_name) return a.value;
  }
  return nullptr;
}

}  // namespace kiln::stablehlo
