// The MLIR bytecode reader's shared state (bytecode_reader.h): the
// sections, string table, dialect and op names, attribute and type tables
// (decoded on first use, bytecode_attributes.cc), the properties table, and
// the reading of the IR (bytecode_ir.cc) and its upgrade from VHLO
// (vhlo_upgrade.cc). Internal to kiln_stablehlo; one Reader reads one
// input, on one thread.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/stablehlo/bytecode_stream.h"
#include "compiler/stablehlo/mlir_module.h"

namespace kiln::stablehlo::bytecode {

// Section ids (mlir/Bytecode/Encoding.h).
enum SectionId : uint8_t {
  kStringSection = 0,
  kDialectSection = 1,
  kAttrTypeSection = 2,
  kAttrTypeOffsetSection = 3,
  kIRSection = 4,
  kResourceSection = 5,
  kResourceOffsetSection = 6,
  kDialectVersionsSection = 7,
  kPropertiesSection = 8,
  kNumSections = 9,
};

// Bytecode versions that changed the encoding.
inline constexpr uint64_t kLazyLoadingVersion = 2;           // isolated regions in sections
inline constexpr uint64_t kUseListOrderingVersion = 3;       // use-list orders after block args
inline constexpr uint64_t kElideBlockArgLocationVersion = 4;  // (type << 1) | hasLocation
inline constexpr uint64_t kNativePropertiesVersion = 5;      // properties section, registered flags
inline constexpr uint64_t kMaxSupportedVersion = 6;

// Op encoding mask bits.
enum OpMask : uint8_t {
  kHasAttrs = 0x01,
  kHasResults = 0x02,
  kHasOperands = 0x04,
  kHasSuccessors = 0x08,
  kHasInlineRegions = 0x10,
  kHasUseListOrders = 0x20,
  kHasProperties = 0x40,
};

// The VHLO version a producer string names ("StableHLO_v1.19.0").
struct VhloVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  bool AtLeast(int a, int b, int c = 0) const {
    return major != a ? major > a : minor != b ? minor > b : patch >= c;
  }
};

struct OpName {
  std::string_view dialect;  // "vhlo"
  std::string_view name;     // "add_v1"
};

struct TableEntry {
  uint32_t dialect = 0;  // index into Reader::dialects
  size_t begin = 0;
  size_t end = 0;
  bool custom = false;  // dialect encoding, else the assembly text
};

// How deep attributes and types may refer to one another while decoding.
inline constexpr int kMaxDecodeDepth = 128;

// An APInt of `width` bits as the bytecode writes it: a byte up to 8 bits,
// a signed varint up to 64, else words (the low word is kept).
Result<uint64_t> ReadAPInt(ByteStream& s, int width);

class Reader {
 public:
  Reader(std::string_view input, std::string_view name) : input_(input), name_(name) {}

  Result<MlirModule> Run();

  // ---- Tables (bytecode_reader.cc) -----------------------------------
  ByteStream StreamOf(const Section& s, std::string_view what) const {
    return ByteStream(input_, s.begin, s.end, what);
  }
  Result<std::string_view> String(uint64_t index) const;
  Status ReadStringSection();
  Status ReadDialectSection();
  Status ReadAttrTypeOffsets();
  Status ReadPropertiesOffsets();
  Result<ByteStream> PropertiesStream(uint64_t index) const;

  // ---- Attributes and types (bytecode_attributes.cc) --------------------
  // Decoded on first use; a reference cycle is an error.
  Result<const Attr*> AttrAt(uint64_t index);
  Result<TypeId> TypeAt(uint64_t index);
  Result<const Attr*> ReadAttrRef(ByteStream& s) {
    KILN_ASSIGN_OR_RETURN(uint64_t i, s.VarInt());
    return AttrAt(i);
  }
  Result<TypeId> ReadTypeRef(ByteStream& s) {
    KILN_ASSIGN_OR_RETURN(uint64_t i, s.VarInt());
    return TypeAt(i);
  }

  // ---- IR (bytecode_ir.cc) -------------------------------------------
  Status ReadIR();

  // ---- Upgrade (vhlo_upgrade.cc) ---------------------------------------
  // Names of the properties of a VHLO op (sorted, as ODS writes them), or
  // nullopt for an op the table does not know.
  static std::optional<std::vector<std::string_view>> PropertyNames(std::string_view vhlo_op);
  // Renames a VHLO op to its StableHLO op and brings its attributes to the
  // form the text reader gives; `in_function_body` picks func.return.
  Status UpgradeOp(Operation& op, bool in_function_body);
  // Turns a vhlo.func_v1 op into a Function of the module.
  Status AddFunction(Operation& op);

  MlirModule& module() { return module_; }
  uint64_t version() const { return version_; }
  const VhloVersion& vhlo_version() const { return vhlo_version_; }
  std::string_view name() const { return name_; }
  size_t input_size() const { return input_.size(); }
  const std::vector<std::string_view>& dialects() const { return dialects_; }
  Error Fail(const std::string& message) const {
    return InvalidArgumentError(std::string(name_) + ": MLIR bytecode: " + message)
        .WithReason("stablehlo_bytecode_error");
  }

  int depth = 0;  // nesting of attribute/type decoding and regions

 private:
  Result<const Attr*> DecodeAttr(const TableEntry& e);
  Result<TypeId> DecodeType(const TableEntry& e);
  Result<const Attr*> DecodeVhloAttr(ByteStream& s);
  Result<const Attr*> DecodeBuiltinAttr(ByteStream& s);
  Result<TypeId> DecodeVhloType(ByteStream& s);
  Result<TypeId> DecodeBuiltinType(ByteStream& s);
  Result<const Attr*> DecodeTensorAttr(ByteStream& s);
  Result<const Attr*> DecodeArray(ByteStream& s);
  Result<const Attr*> DecodeDictionary(ByteStream& s);
  Result<const Attr*> DecodeInteger(ByteStream& s, TypeId type);
  Result<TypeId> TensorType(ByteStream& s, bool with_encoding);

  std::string_view input_;
  std::string_view name_;
  uint64_t version_ = 0;
  VhloVersion vhlo_version_;
  std::array<std::optional<Section>, kNumSections> sections_;
  std::vector<std::string_view> strings_;
  std::vector<std::string_view> dialects_;

 public:
  std::vector<OpName> op_names;

 private:
  std::vector<TableEntry> attr_entries_;
  std::vector<TableEntry> type_entries_;
  std::vector<const Attr*> attrs_;  // decoded, or null
  std::vector<TypeId> types_;       // decoded, or kNoType
  std::vector<uint8_t> attr_state_;  // 0 new, 1 decoding, 2 done
  std::vector<uint8_t> type_state_;
  std::vector<std::pair<size_t, size_t>> properties_;
  MlirModule module_;
};

}  // namespace kiln::stablehlo::bytecode
