// Module and entry configuration: replica and partition counts, parameter
// and result shardings, input/output aliasing and buffer donors, as XLA's
// translation carries `mhlo.num_replicas`, `mhlo.num_partitions`,
// `mhlo.sharding`, `tf.aliasing_output` and `jax.buffer_donor` over.
#include "compiler/hlo/attribute_value_parser.h"
#include "compiler/hlo/token_cursor.h"
#include "compiler/stablehlo/converter.h"

namespace kiln::stablehlo::convert_internal {
namespace {

// The canonical text the HLO parser keeps for `text` as an attribute value
// (attribute.h); an error unless all of `text` is one value (a sharding
// such as ")" would otherwise print as HLO that does not parse).
Result<std::string> CanonicalText(std::string_view text) {
  hlo::TokenCursor cur(text, "mhlo.sharding");
  std::string out;
  Status value = hlo::ParseGenericAttributeValue(cur, out);
  if (!value || out.empty() || cur.kind() != hlo::TokKind::kEof) {
    return InvalidArgumentError("mhlo.sharding \"" + std::string(text) + "\" is not an HLO sharding")
        .WithReason("stablehlo_convert_error");
  }
  return out;
}

const Attr* FindNamed(const std::vector<NamedAttr>& attrs, std::string_view name) {
  for (const NamedAttr& a : attrs) {
    if (a.name == name) return a.value;
  }
  return nullptr;
}

int64_t IntOf(const Attr* a, int64_t fallback) {
  if (a == nullptr) return fallback;
  if (a->kind == Attr::Kind::kInt) return a->i;
  return fallback;
}

}  // namespace

Status Converter::ApplyModuleAttributes() {
  const int64_t partitions = IntOf(mlir_.FindModuleAttr("mhlo.num_partitions"), 1);
  const int64_t replicas = IntOf(mlir_.FindModuleAttr("mhlo.num_replicas"), 1);
  if (replicas < 1 || partitions < 1) return InvalidArgumentError("replica and partition counts must be positive");
  if (replicas != 1) module_->AddAttribute(hlo::Attribute::Text("replica_count", std::to_string(replicas)));
  if (partitions != 1) module_->AddAttribute(hlo::Attribute::Text("num_partitions", std::to_string(partitions)));

  hlo::Computation* entry = module_->entry();
  auto it = functions_.find(entry->name());
  if (it == functions_.end()) return Ok();  // a synthesized entry
  const Function& fn = *it->second;
  std::string aliases, donors;
  for (size_t i = 0; i < fn.arg_attrs.size() && i < entry->parameters().size(); ++i) {
    const std::vector<NamedAttr>& attrs = fn.arg_attrs[i];
    hlo::Instruction* param = entry->parameters()[i];
    if (const Attr* s = FindNamed(attrs, "mhlo.sharding"); s != nullptr && s->kind == Attr::Kind::kString &&
                                                            !s->text.empty()) {
      Result<std::string> text = CanonicalText(s->text);
      if (!text) return text.error().WithContext(std::string(filename()) + ": argument " + std::to_string(i));
      param->AddAttribute(hlo::Attribute::Text("sharding", *text));
    }
    if (const Attr* a = FindNamed(attrs, "tf.aliasing_output"); a != nullptr && a->kind == Attr::Kind::kInt) {
      if (!aliases.empty()) aliases += ",";
      const std::string index = fn.result_types.size() == 1 ? "{}" : "{" + std::to_string(a->i) + "}";
      aliases += index + ":(" + std::to_string(i) + ",{},may-alias)";
    }
    if (const Attr* d = FindNamed(attrs, "jax.buffer_donor"); d != nullptr && d->kind == Attr::Kind::kBool && d->b) {
      if (!donors.empty()) donors += ",";
      donors += "(" + std::to_string(i) + ",{})";
    }
  }
  if (!aliases.empty()) module_->AddAttribute(hlo::Attribute::Text("input_output_alias", "{" + aliases + "}"));
  if (!donors.empty()) module_->AddAttribute(hlo::Attribute::Text("buffer_donor", "{" + donors + "}"));
  // Result shardings: the root's, a tuple sharding for several results.
  std::vector<std::string> shardings;
  bool any = false;
  for (size_t r = 0; r < fn.result_attrs.size(); ++r) {
    const Attr* s = FindNamed(fn.result_attrs[r], "mhlo.sharding");
    if (s != nullptr && s->kind == Attr::Kind::kString && !s->text.empty()) {
      Result<std::string> text = CanonicalText(s->text);
      if (!text) return text.error().WithContext(std::string(filename()) + ": result " + std::to_string(r));
      shardings.push_back(*text);
      any = true;
    } else {
      shardings.push_back("{replicated}");
    }
  }
  if (any && entry->root()->FindAttribute("sharding") == nullptr) {
    if (shardings.size() == 1) {
      entry->root()->AddAttribute(hlo::Attribute::Text("sharding", shardings[0]));
    } else if (entry->root()->opcode() == hlo::Opcode::kTuple) {
      std::string text = "{";
      for (size_t i = 0; i < shardings.size(); ++i) {
        if (i > 0) text += ",";
        text += shardings[i];
      }
      text += "}";
      entry->root()->AddAttribute(hlo::Attribute::Text("sharding", text));
    }
  }
  return Ok();
}

}  // namespace kiln::stablehlo::convert_internal
