// The IR section: the top-level block (a builtin.module), its regions,
// blocks and ops, with values numbered per isolated region as the writer
// numbers them: a region's block arguments and op results first, then its
// nested regions' values (bytecode_internal.h).
#include "compiler/stablehlo/bytecode_internal.h"
#include "compiler/stablehlo/text_parser.h"

namespace kiln::stablehlo::bytecode {
namespace {

constexpr int kMaxRegionNesting = 256;

class IrReader {
 public:
  explicit IrReader(Reader& r) : r_(r) {}

  Status Run(ByteStream s) {
    // One block without arguments holding the top-level op(s).
    KILN_ASSIGN_OR_RETURN(uint64_t header, s.VarInt());
    if (header & 1) return s.Fail("the top-level block has arguments");
    const uint64_t ops = header >> 1;
    if (ops > s.remaining()) return s.Fail("more ops than bytes");
    scopes_.emplace_back();
    for (uint64_t i = 0; i < ops; ++i) {
      KILN_ASSIGN_OR_RETURN(Operation * op, ReadOp(s, Context::kTop));
      if (op->name != "builtin.module") return r_.Fail("the top-level op is " + std::string(op->name) + ", not a module");
      KILN_RETURN_IF_ERROR(AddModule(*op));
    }
    return Ok();
  }

 private:
  enum class Context { kTop, kModule, kFunctionBody, kOther };

  Status AddModule(Operation& op) {
    MlirModule& m = r_.module();
    for (const NamedAttr& a : op.attrs) {
      if (a.name == "sym_name" && a.value->kind == Attr::Kind::kString) {
        if (m.name.empty()) m.name = a.value->text;
      } else if (a.name != "sym_visibility") {
        m.attrs.push_back(a);
      }
    }
    return Ok();
  }

  // Defines the next value of the innermost region.
  Status Define(ValueId v) {
    if (next_.empty()) return r_.Fail("a value is defined outside any region");
    size_t& next = next_.back();
    if (next >= next_limits_.back()) return r_.Fail("a region defines more values than it announced");
    scopes_.back().values[next++] = v;
    return Ok();
  }

  Result<ValueId> Use(ByteStream& s) {
    KILN_ASSIGN_OR_RETURN(uint64_t index, s.VarInt());
    const Scope& scope = scopes_.back();
    if (index >= scope.values.size() || scope.values[index] == kNoValue) {
      return s.Fail("an operand refers to value " + std::to_string(index) + ", which is not defined before it");
    }
    return scope.values[index];
  }

  // Use-list orders of a range of `range_size` values (an op's results or
  // a block's arguments): read past, since uses are not ordered here.
  Status SkipUseListOrders(ByteStream& s, uint64_t range_size) {
    uint64_t values = 1;
    if (range_size > 1) {
      KILN_ASSIGN_OR_RETURN(values, s.Count());
    }
    for (uint64_t i = 0; i < values; ++i) {
      if (range_size > 1) KILN_RETURN_IF_ERROR(s.VarInt());  // which value of the range
      bool pairs = false;
      KILN_ASSIGN_OR_RETURN(uint64_t indices, s.VarIntWithFlag(pairs));
      if (indices > s.remaining()) return s.Fail("use-list order longer than the data");
      for (uint64_t k = 0; k < indices; ++k) KILN_RETURN_IF_ERROR(s.VarInt());
    }
    return Ok();
  }

  Status ReadProperties(ByteStream& s, Operation& op, const OpName& name) {
    KILN_ASSIGN_OR_RETURN(uint64_t index, s.VarInt());
    KILN_ASSIGN_OR_RETURN(ByteStream props, r_.PropertiesStream(index));
    MlirModule& m = r_.module();
    if (name.dialect == "builtin" && name.name == "module") {
      // Optional sym_name and sym_visibility.
      for (std::string_view attr_name : {"sym_name", "sym_visibility"}) {
        if (props.empty()) break;
        bool present = false;
        KILN_ASSIGN_OR_RETURN(uint64_t attr, props.VarIntWithFlag(present));
        if (!present) continue;
        KILN_ASSIGN_OR_RETURN(const Attr* value, r_.AttrAt(attr));
        op.attrs.push_back({m.Intern(attr_name), value});
      }
      return Ok();
    }
    if (name.dialect != "vhlo") {
      return r_.Fail("properties of op " + std::string(name.dialect) + "." + std::string(name.name) +
                     " cannot be read");
    }
    // VHLO's attributes are all required: one attribute index each, in
    // the order of their sorted names.
    std::vector<uint64_t> indices;
    while (!props.empty()) {
      KILN_ASSIGN_OR_RETURN(uint64_t index, props.VarInt());
      indices.push_back(index);
    }
    if (indices.empty()) return Ok();
    std::optional<std::vector<std::string_view>> names = Reader::PropertyNames(name.name);
    if (!names) return r_.Fail("op vhlo." + std::string(name.name) + " is not a VHLO op this reader knows");
    if (names->size() != indices.size()) {
      return r_.Fail("op vhlo." + std::string(name.name) + " has " + std::to_string(indices.size()) +
                     " properties, not the " + std::to_string(names->size()) + " known");
    }
    for (size_t i = 0; i < indices.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(const Attr* value, r_.AttrAt(indices[i]));
      op.attrs.push_back({m.Intern((*names)[i]), value});
    }
    return Ok();
  }

  Result<Operation*> ReadOp(ByteStream& s, Context context) {
    if (++ops_read_ > static_cast<uint64_t>(kMaxOperations)) return r_.Fail("too many ops");
    KILN_ASSIGN_OR_RETURN(uint64_t name_index, s.VarInt());
    if (name_index >= r_.op_names.size()) return s.Fail("an op names op " + std::to_string(name_index));
    const OpName name = r_.op_names[name_index];
    KILN_ASSIGN_OR_RETURN(uint8_t mask, s.Byte());
    KILN_RETURN_IF_ERROR(s.VarInt());  // location, ignored
    MlirModule& m = r_.module();
    Operation* op = m.NewOperation();
    op->name = m.Intern(std::string(name.dialect) + "." + std::string(name.name));
    if (mask & kHasAttrs) {
      KILN_ASSIGN_OR_RETURN(const Attr* dict, r_.ReadAttrRef(s));
      if (dict->kind != Attr::Kind::kDict) return s.Fail("an op's attributes are not a dictionary");
      op->attrs.insert(op->attrs.end(), dict->fields.begin(), dict->fields.end());
    }
    if (mask & kHasProperties) KILN_RETURN_IF_ERROR(ReadProperties(s, *op, name));
    if (mask & kHasResults) {
      KILN_ASSIGN_OR_RETURN(uint64_t count, s.Count());
      for (uint64_t i = 0; i < count; ++i) {
        KILN_ASSIGN_OR_RETURN(TypeId type, r_.ReadTypeRef(s));
        op->results.push_back(m.NewValue(type));
      }
    }
    if (mask & kHasOperands) {
      KILN_ASSIGN_OR_RETURN(uint64_t count, s.Count());
      for (uint64_t i = 0; i < count; ++i) {
        KILN_ASSIGN_OR_RETURN(ValueId v, Use(s));
        op->operands.push_back(v);
      }
    }
    if (mask & kHasSuccessors) return r_.Fail("op " + std::string(op->name) + " has successor blocks, which are not supported");
    for (ValueId v : op->results) KILN_RETURN_IF_ERROR(Define(v));
    if (mask & kHasUseListOrders) KILN_RETURN_IF_ERROR(SkipUseListOrders(s, op->results.size()));
    if (mask & kHasInlineRegions) {
      bool isolated = false;
      KILN_ASSIGN_OR_RETURN(uint64_t regions, s.VarIntWithFlag(isolated));
      if (regions > s.remaining()) return s.Fail("more regions than bytes");
      const Context inner = name.name == "module" ? Context::kModule
                            : name.name == "func_v1" ? Context::kFunctionBody
                                                     : Context::kOther;
      op->regions.resize(regions);
      if (isolated && r_.version() >= kLazyLoadingVersion) {
        // The regions of an isolated op share one section.
        KILN_ASSIGN_OR_RETURN(Section section, s.ReadSection());
        if (section.id != kIRSection) return s.Fail("isolated regions are not an IR section");
        ByteStream inner_stream = r_.StreamOf(section, "region");
        for (Region& region : op->regions) KILN_RETURN_IF_ERROR(ReadRegion(inner_stream, region, true, inner));
        if (!inner_stream.empty()) return inner_stream.Fail("bytes left after the regions");
      } else {
        for (Region& region : op->regions) KILN_RETURN_IF_ERROR(ReadRegion(s, region, isolated, inner));
      }
    }
    if (op->name == "vhlo.func_v1") {
      if (context != Context::kModule) return r_.Fail("a function outside a module");
      KILN_RETURN_IF_ERROR(r_.AddFunction(*op));
      return op;
    }
    if (op->name != "builtin.module") KILN_RETURN_IF_ERROR(r_.UpgradeOp(*op, context == Context::kFunctionBody));
    return op;
  }

  Status ReadRegion(ByteStream& s, Region& region, bool isolated, Context context) {
    if (++r_.depth > kMaxRegionNesting) return r_.Fail("regions nest too deeply");
    struct Guard {
      int& d;
      ~Guard() { --d; }
    } guard{r_.depth};
    if (isolated) scopes_.emplace_back();
    KILN_ASSIGN_OR_RETURN(uint64_t blocks, s.Count());
    if (blocks > 0) {
      KILN_ASSIGN_OR_RETURN(uint64_t values, s.Count());
      // Every value takes at least a byte to define: all regions together
      // cannot announce more values than the input has bytes.
      reserved_ += values;
      if (reserved_ > r_.input_size()) return s.Fail("regions announce more values than the input could define");
      Scope& scope = scopes_.back();
      const size_t base = scope.values.size();
      scope.values.resize(base + values, kNoValue);
      next_.push_back(base);
      next_limits_.push_back(base + values);
      for (uint64_t b = 0; b < blocks; ++b) {
        region.blocks.push_back(std::make_unique<Block>());
        KILN_RETURN_IF_ERROR(ReadBlock(s, *region.blocks.back(), context));
      }
      next_.pop_back();
      next_limits_.pop_back();
    }
    if (isolated) scopes_.pop_back();
    return Ok();
  }

  Status ReadBlock(ByteStream& s, Block& block, Context context) {
    bool has_args = false;
    KILN_ASSIGN_OR_RETURN(uint64_t ops, s.VarIntWithFlag(has_args));
    if (ops > s.remaining()) return s.Fail("more ops than bytes");
    MlirModule& m = r_.module();
    if (has_args) {
      KILN_ASSIGN_OR_RETURN(uint64_t args, s.Count());
      for (uint64_t i = 0; i < args; ++i) {
        TypeId type = kNoType;
        if (r_.version() >= kElideBlockArgLocationVersion) {
          bool has_location = false;
          KILN_ASSIGN_OR_RETURN(uint64_t t, s.VarIntWithFlag(has_location));
          KILN_ASSIGN_OR_RETURN(type, r_.TypeAt(t));
          if (has_location) KILN_RETURN_IF_ERROR(s.VarInt());
        } else {
          KILN_ASSIGN_OR_RETURN(type, r_.ReadTypeRef(s));
          KILN_RETURN_IF_ERROR(s.VarInt());
        }
        const ValueId v = m.NewValue(type);
        block.args.push_back(v);
        KILN_RETURN_IF_ERROR(Define(v));
      }
      if (r_.version() >= kUseListOrderingVersion) {
        KILN_ASSIGN_OR_RETURN(uint8_t has_orders, s.Byte());
        if (has_orders != 0) KILN_RETURN_IF_ERROR(SkipUseListOrders(s, args));
      }
    }
    for (uint64_t i = 0; i < ops; ++i) {
      KILN_ASSIGN_OR_RETURN(Operation * op, ReadOp(s, context));
      if (op->name != "vhlo.func_v1" && context != Context::kModule) block.ops.push_back(op);
    }
    return Ok();
  }

  struct Scope {
    std::vector<ValueId> values;
  };
  Reader& r_;
  std::vector<Scope> scopes_;
  std::vector<size_t> next_;
  std::vector<size_t> next_limits_;
  uint64_t ops_read_ = 0;
  uint64_t reserved_ = 0;
};

}  // namespace

Status Reader::ReadIR() {
  ByteStream s = StreamOf(*sections_[kIRSection], "IR section");
  return IrReader(*this).Run(s);
}

}  // namespace kiln::stablehlo::bytecode
