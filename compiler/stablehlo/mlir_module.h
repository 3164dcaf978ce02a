// The in-memory form of a StableHLO program between its reading (MLIR text,
// text_parser.h; VHLO bytecode, bytecode_reader.h) and its conversion to the
// HLO IR (convert.h): MLIR's generic structure of operations with operands,
// results, attributes and regions, specialised only as far as StableHLO
// needs (tensor types map to HLO element types; dense constants are HLO
// literals).
//
// An MlirModule owns everything: types (interned in its TypeTable),
// attributes, operations and their regions. Pointers into it stay valid for
// its lifetime. Pretty and generic forms of an op read to the same
// Operation: attributes under their generic names. Not thread-safe for
// mutation; concurrent reads are fine.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/hlo/literal.h"
#include "compiler/hlo/primitive_type.h"

namespace kiln::stablehlo {

// A dimension written `?`.
inline constexpr int64_t kDynamic = -1;

using TypeId = uint32_t;
inline constexpr TypeId kNoType = UINT32_MAX;

// !quant.uniform<storage<min:max>:expressed[:axis], scale:zero_point | {...}>
struct QuantInfo {
  hlo::PrimitiveType storage = hlo::PrimitiveType::kS8;
  hlo::PrimitiveType expressed = hlo::PrimitiveType::kF32;
  int64_t storage_min = 0;
  int64_t storage_max = 0;
  int64_t axis = -1;  // -1: per tensor
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
  bool operator==(const QuantInfo&) const = default;
};

enum class TypeKind : uint8_t {
  kTensor,    // tensor<2x?xf32>, or an unranked tensor<*xf32>
  kScalar,    // f32, i64, index, complex<f32>: element types on their own
  kToken,     // !stablehlo.token
  kTuple,     // tuple<...>
  kFunction,  // (a, b) -> c
  kNone,      // none
  kBuffer,    // memref<2xf32>: members[0] is the tensor type of its contents
  kOpaque,    // a type HLO has nothing for (!stablehlo.future<...>, !x.y<...>):
              // its text in unsupported_element
};

struct TypeInfo {
  TypeKind kind = TypeKind::kNone;
  hlo::PrimitiveType element = hlo::PrimitiveType::kInvalid;  // tensor and scalar
  bool is_index = false;                                      // element written `index`
  bool unranked = false;
  std::vector<int64_t> dims;    // kDynamic for `?`
  std::vector<int64_t> bounds;  // empty, or one per dim (kDynamic: none)
  int32_t quant = -1;           // index into TypeTable::quant(); element is the storage type
  std::vector<TypeId> members;  // tuple elements, function inputs
  std::vector<TypeId> results;  // function results
  // A builtin element type HLO has no counterpart of ("f6E2M3FN"); element
  // is then kInvalid.
  std::string unsupported_element;
  bool operator==(const TypeInfo&) const = default;
};

// Structurally interned types: equal types get equal ids.
class TypeTable {
 public:
  TypeId Intern(TypeInfo info);
  TypeId Tensor(hlo::PrimitiveType element, std::vector<int64_t> dims);
  TypeId Scalar(hlo::PrimitiveType element);
  int32_t InternQuant(QuantInfo q);

  const TypeInfo& operator[](TypeId id) const { return types_[id]; }
  size_t size() const { return types_.size(); }
  const QuantInfo& quant(int32_t i) const { return quants_[static_cast<size_t>(i)]; }
  // MLIR text of a type, for messages: "tensor<2x?xf32>".
  std::string ToString(TypeId id) const;

 private:
  std::deque<TypeInfo> types_;
  std::unordered_map<std::string, TypeId> index_;
  std::vector<QuantInfo> quants_;
};

struct Attr;
struct NamedAttr {
  std::string_view name;  // interned in the module
  const Attr* value;
};

// One attribute value. Which members hold the value depends on `kind`.
struct Attr {
  enum class Kind : uint8_t {
    kUnit,        // unit / a name written alone in a dictionary
    kBool,        // b
    kInt,         // i, with `type` (i64 when unwritten)
    kFloat,       // f, with `type`
    kString,      // text
    kType,        // type
    kSymbol,      // text: @name (nested references joined with ::)
    kArray,       // items: [a, b]
    kDenseArray,  // ints (or floats in `literal`): array<i64: 1, 2>; type is the element type
    kDense,       // literal (of `type`), splat when written as one value
    kDict,        // fields: {a = 1, b}
    kEnum,        // text = the value ("EQ"); dialect_name = "comparison_direction"
    kStruct,      // dialect_name = "stablehlo.gather"; fields
    kConvDims,    // ints: the 9 groups of a #stablehlo.conv<...> flattened (see text_attributes.cc)
    kOpaque,      // text: an attribute kept as written (affine maps, unknown dialects)
  };
  Kind kind = Kind::kUnit;
  bool b = false;
  bool splat = false;
  int64_t i = 0;
  double f = 0;
  TypeId type = kNoType;
  std::string text;
  std::string dialect_name;
  std::vector<const Attr*> items;
  std::vector<NamedAttr> fields;
  std::vector<int64_t> ints;
  std::vector<int64_t> conv_groups;  // kConvDims: sizes of the spatial groups
  std::shared_ptr<const hlo::Literal> literal;

  const Attr* Field(std::string_view name) const;
};

using ValueId = uint32_t;
inline constexpr ValueId kNoValue = UINT32_MAX;

struct SourcePos {
  int line = 0;
  int column = 0;
};

struct Block;
struct Region {
  std::vector<std::unique_ptr<Block>> blocks;
};

struct Operation {
  std::string_view name;  // "stablehlo.add", interned in the module
  std::vector<ValueId> operands;
  std::vector<ValueId> results;
  std::vector<NamedAttr> attrs;  // generic attributes and properties, in written order
  std::vector<Region> regions;
  SourcePos pos;

  const Attr* FindAttr(std::string_view attr_name) const;
};

struct Block {
  std::vector<ValueId> args;
  std::vector<Operation*> ops;
};

// func.func, after its reading: a signature and a body.
struct Function {
  std::string name;
  bool is_public = true;  // no visibility or `public`
  std::vector<TypeId> arg_types;
  std::vector<std::vector<NamedAttr>> arg_attrs;
  std::vector<TypeId> result_types;
  std::vector<std::vector<NamedAttr>> result_attrs;
  std::vector<NamedAttr> attrs;
  Region body;  // empty for a declaration
  SourcePos pos;
};

class MlirModule {
 public:
  MlirModule() = default;
  MlirModule(const MlirModule&) = delete;
  MlirModule& operator=(const MlirModule&) = delete;
  MlirModule(MlirModule&&) = default;
  MlirModule& operator=(MlirModule&&) = default;

  TypeTable& types() { return types_; }
  const TypeTable& types() const { return types_; }

  // Storage. Returned pointers stay valid for the module's lifetime.
  Attr* NewAttr(Attr::Kind kind);
  Operation* NewOperation();
  std::string_view Intern(std::string_view text);
  ValueId NewValue(TypeId type);
  TypeId value_type(ValueId v) const { return values_[v]; }
  size_t value_count() const { return values_.size(); }
  size_t operation_count() const { return operations_.size(); }

  // `module @name attributes {...}`; several modules of one input (split
  // files) are read into one, their functions in order.
  std::string name;
  std::vector<NamedAttr> attrs;
  std::vector<std::unique_ptr<Function>> functions;
  const Function* FindFunction(std::string_view fn_name) const;
  const Attr* FindModuleAttr(std::string_view attr_name) const;

 private:
  TypeTable types_;
  std::deque<Attr> attrs_storage_;
  std::deque<Operation> operations_;
  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, std::string_view> string_index_;
  std::vector<TypeId> values_;
};

}  // namespace kiln::stablehlo
