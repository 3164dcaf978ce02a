// VHLO ops to StableHLO (bytecode_internal.h): `vhlo.add_v1` is
// `stablehlo.add`, whatever its version; attributes VHLO spells out at their
// defaults are dropped and the rest take the forms the text reader gives
// (symbols for callees, unit attributes for flags), as StableHLO's
// vhlo-to-stablehlo legalization makes them, so that an artifact and its
// source convert alike. vhlo.func_v1 becomes a Function.
#include <algorithm>
#include <array>

#include "compiler/stablehlo/bytecode_internal.h"

namespace kiln::stablehlo::bytecode {
namespace {

struct OpProperties {
  std::string_view op;
  std::vector<std::string_view> names;  // sorted, as ODS writes properties
};

const std::vector<OpProperties>& PropertyTable() {
  static const std::vector<OpProperties> kTable = [] {
    const std::vector<std::string_view> conv_common = {
        "batch_group_count",       "feature_group_count",          "input_batch_dimension",
        "input_feature_dimension", "input_spatial_dimensions",     "kernel_input_feature_dimension",
        "kernel_output_feature_dimension", "kernel_spatial_dimensions", "lhs_dilation",
        "output_batch_dimension",  "output_feature_dimension",     "output_spatial_dimensions"};
    auto with = [](std::vector<std::string_view> base, std::initializer_list<std::string_view> more) {
      base.insert(base.end(), more);
      std::sort(base.begin(), base.end());
      return base;
    };
    std::vector<OpProperties> t = {
        {"all_gather_v1", {"all_gather_dim", "channel_id", "replica_groups", "use_global_device_ids"}},
        {"all_gather_v2", {"all_gather_dim", "channel_id", "replica_groups", "use_global_device_ids"}},
        {"all_reduce_v1", {"channel_id", "replica_groups", "use_global_device_ids"}},
        {"all_reduce_v2", {"channel_id", "replica_groups", "use_global_device_ids"}},
        {"all_to_all_v1", {"channel_id", "concat_dimension", "replica_groups", "split_count", "split_dimension"}},
        {"all_to_all_v2", {"channel_id", "concat_dimension", "replica_groups", "split_count", "split_dimension"}},
        {"batch_norm_grad_v1", {"epsilon", "feature_index"}},
        {"batch_norm_inference_v1", {"epsilon", "feature_index"}},
        {"batch_norm_training_v1", {"epsilon", "feature_index"}},
        {"broadcast_in_dim_v1", {"broadcast_dimensions"}},
        {"broadcast_v1", {"broadcast_sizes"}},
        {"call_v1", {"callee"}},
        {"cholesky_v1", {"lower"}},
        {"collective_broadcast_v1", {"channel_id", "replica_groups"}},
        {"collective_permute_v1", {"channel_id", "source_target_pairs"}},
        {"collective_reduce_v1", {"channel_id", "has_dynamic_root", "replica_groups", "use_global_device_ids"}},
        {"compare_v1", {"compare_type", "comparison_direction"}},
        {"composite_v1", {"composite_attributes", "decomposition", "name", "version"}},
        {"composite_v2", {"composite_attributes", "decomposition", "name", "version"}},
        {"concatenate_v1", {"dimension"}},
        {"constant_v1", {"value"}},
        {"convolution_v1", with(conv_common, {"padding", "precision_config", "rhs_dilation", "window_reversal",
                                             "window_strides"})},
        {"cross-replica-sum_v1", {"replica_groups"}},
        {"custom_call_v1", {"api_version", "backend_config", "call_target_name", "called_computations",
                            "has_side_effect", "operand_layouts", "output_operand_aliases", "result_layouts"}},
        {"custom_call_v2", {"api_version", "backend_config", "call_target_name", "called_computations",
                            "has_side_effect", "operand_layouts", "output_operand_aliases", "result_layouts",
                            "result_tilings"}},
        {"dot_general_v1", {"lhs_batching_dimensions", "lhs_contracting_dimensions", "precision_config",
                            "rhs_batching_dimensions", "rhs_contracting_dimensions"}},
        {"dot_general_v2", {"accumulation_type", "allow_imprecise_accumulation", "lhs_batching_dimensions",
                            "lhs_component_count", "lhs_contracting_dimensions", "lhs_precision_type",
                            "num_primitive_operations", "precision_config", "rhs_batching_dimensions",
                            "rhs_component_count", "rhs_contracting_dimensions", "rhs_precision_type"}},
        {"dot_v1", {"precision_config"}},
        {"dynamic_broadcast_in_dim_v1",
         {"broadcast_dimensions", "known_expanding_dimensions", "known_nonexpanding_dimensions"}},
        {"dynamic_conv_v1", with(conv_common, {"padding", "precision_config", "rhs_dilation", "window_reversal",
                                              "window_strides"})},
        {"dynamic_conv_v2", with(conv_common, {"precision_config", "rhs_dilation", "window_reversal",
                                              "window_strides"})},
        {"dynamic_gather_v1",
         {"collapsed_slice_dims", "index_vector_dim", "indices_are_sorted", "offset_dims", "start_index_map"}},
        {"dynamic_gather_v2",
         {"collapsed_slice_dims", "index_vector_dim", "indices_are_sorted", "offset_dims", "operand_batching_dims",
          "start_index_map", "start_indices_batching_dims"}},
        {"dynamic_iota_v1", {"iota_dimension"}},
        {"dynamic_slice_v1", {"slice_sizes"}},
        {"einsum_v1", {"einsum_config"}},
        {"fft_v1", {"fft_length", "fft_type"}},
        {"func_v1", {"arg_attrs", "function_type", "res_attrs", "sym_name", "sym_visibility"}},
        {"gather_v1",
         {"collapsed_slice_dims", "index_vector_dim", "indices_are_sorted", "offset_dims", "slice_sizes",
          "start_index_map"}},
        {"gather_v2",
         {"collapsed_slice_dims", "index_vector_dim", "indices_are_sorted", "offset_dims", "operand_batching_dims",
          "slice_sizes", "start_index_map", "start_indices_batching_dims"}},
        {"get_dimension_size_v1", {"dimension"}},
        {"get_tuple_element_v1", {"index"}},
        {"infeed_v1", {"infeed_config", "layout"}},
        {"iota_v1", {"iota_dimension"}},
        {"map_v1", {"dimensions"}},
        {"outfeed_v1", {"outfeed_config"}},
        {"pad_v1", {"edge_padding_high", "edge_padding_low", "interior_padding"}},
        {"recv_v1", {"channel_id", "channel_type", "is_host_transfer"}},
        {"recv_v2", {"channel_id", "channel_type", "is_host_transfer", "source_target_pairs"}},
        {"reduce_precision_v1", {"exponent_bits", "mantissa_bits"}},
        {"reduce_scatter_v1", {"channel_id", "replica_groups", "scatter_dimension", "use_global_device_ids"}},
        {"reduce_v1", {"dimensions"}},
        {"reduce_window_v1",
         {"base_dilations", "padding", "window_dilations", "window_dimensions", "window_strides"}},
        {"reverse_v1", {"dimensions"}},
        {"rng_bit_generator_v1", {"rng_algorithm"}},
        {"rng_v1", {"rng_distribution"}},
        {"scatter_v1",
         {"index_vector_dim", "indices_are_sorted", "inserted_window_dims", "scatter_dims_to_operand_dims",
          "unique_indices", "update_window_dims"}},
        {"scatter_v2",
         {"index_vector_dim", "indices_are_sorted", "input_batching_dims", "inserted_window_dims",
          "scatter_dims_to_operand_dims", "scatter_indices_batching_dims", "unique_indices",
          "update_window_dims"}},
        {"select_and_scatter_v1", {"padding", "window_dimensions", "window_strides"}},
        {"send_v1", {"channel_id", "channel_type", "is_host_transfer"}},
        {"send_v2", {"channel_id", "channel_type", "is_host_transfer", "source_target_pairs"}},
        {"set_dimension_size_v1", {"dimension"}},
        {"slice_v1", {"limit_indices", "start_indices", "strides"}},
        {"sort_v1", {"dimension", "is_stable"}},
        {"torch_index_select_v1", {"batch_dims", "dim"}},
        {"trace_v1", {"tag"}},
        {"transpose_v1", {"permutation"}},
        {"triangular_solve_v1", {"left_side", "lower", "transpose_a", "unit_diagonal"}},
        {"unary_einsum_v1", {"einsum_config"}},
    };
    // The unary math ops of version 2 take a result accuracy.
    for (std::string_view op : {"cbrt_v2", "cosine_v2", "exponential_minus_one_v2", "exponential_v2",
                                "log_plus_one_v2", "log_v2", "logistic_v2", "rsqrt_v2", "sine_v2", "sqrt_v2",
                                "tan_v2", "tanh_v2"}) {
      t.push_back({op, {"result_accuracy"}});
    }
    return t;
  }();
  return kTable;
}

// "add_v1" -> "add".
std::string_view BaseName(std::string_view vhlo_name) {
  const size_t at = vhlo_name.rfind("_v");
  if (at == std::string_view::npos || at + 2 >= vhlo_name.size()) return vhlo_name;
  for (size_t i = at + 2; i < vhlo_name.size(); ++i) {
    if (vhlo_name[i] < '0' || vhlo_name[i] > '9') return vhlo_name;
  }
  return vhlo_name.substr(0, at);
}

bool IsEnum(const Attr* a, std::string_view value) { return a->kind == Attr::Kind::kEnum && a->text == value; }

bool IsAllOf(const Attr* a, std::string_view value) {
  if (a->kind != Attr::Kind::kArray) return false;
  for (const Attr* item : a->items) {
    if (!IsEnum(item, value)) return false;
  }
  return true;
}

bool IsEmpty(const Attr* a) {
  return (a->kind == Attr::Kind::kArray && a->items.empty()) || (a->kind == Attr::Kind::kDict && a->fields.empty()) ||
         (a->kind == Attr::Kind::kString && a->text.empty()) ||
         (a->kind == Attr::Kind::kDense && a->literal != nullptr && !a->splat && a->literal->element_count() == 0);
}

bool IsNoneType(const MlirModule& m, const Attr* a) {
  return a->kind == Attr::Kind::kType && m.types()[a->type].kind == TypeKind::kNone;
}

bool IsDefaultResultAccuracy(const Attr* a) {
  if (a->kind != Attr::Kind::kStruct) return false;
  for (const NamedAttr& f : a->fields) {
    if (f.value->kind == Attr::Kind::kFloat && f.value->f != 0) return false;
    if (f.value->kind == Attr::Kind::kInt && f.value->i != 0) return false;
    if (f.value->kind == Attr::Kind::kEnum && f.value->text != "DEFAULT") return false;
  }
  return true;
}

}  // namespace

std::optional<std::vector<std::string_view>> Reader::PropertyNames(std::string_view vhlo_op) {
  for (const OpProperties& p : PropertyTable()) {
    if (p.op == vhlo_op) return p.names;
  }
  return std::nullopt;
}

Status Reader::UpgradeOp(Operation& op, bool in_function_body) {
  const std::string_view full = op.name;
  if (!full.starts_with("vhlo.")) return Ok();  // another dialect: kept as it is
  const std::string_view vhlo_name = full.substr(5);
  const std::string_view base = BaseName(vhlo_name);
  MlirModule& m = module_;
  if (base == "return") {
    op.name = m.Intern(in_function_body ? "func.return" : "stablehlo.return");
  } else if (base == "call") {
    op.name = m.Intern("func.call");
  } else {
    op.name = m.Intern("stablehlo." + std::string(base));
  }
  std::vector<NamedAttr> kept;
  kept.reserve(op.attrs.size());
  for (NamedAttr a : op.attrs) {
    const std::string_view n = a.name;
    const Attr* v = a.value;
    // Defaults VHLO spells out and StableHLO leaves unwritten.
    if ((n == "compare_type" && IsEnum(v, "NOTYPE")) || (n == "precision_config" && IsAllOf(v, "DEFAULT")) ||
        (n == "result_accuracy" && IsDefaultResultAccuracy(v)) ||
        ((n == "use_global_device_ids" || n == "has_side_effect" || n == "is_stable" || n == "indices_are_sorted" ||
          n == "unique_indices" || n == "is_host_transfer" || n == "has_dynamic_root") &&
         v->kind == Attr::Kind::kBool && !v->b) ||
        ((n == "known_expanding_dimensions" || n == "known_nonexpanding_dimensions" || n == "called_computations" ||
          n == "output_operand_aliases" || n == "operand_layouts" || n == "result_layouts" || n == "result_tilings" ||
          n == "composite_attributes") &&
         IsEmpty(v)) ||
        (n == "backend_config" && IsEmpty(v)) || (n == "channel_id" && v->kind == Attr::Kind::kInt && v->i == 0) ||
        n == "channel_type" ||
        (n == "api_version" && base == "custom_call" && v->kind == Attr::Kind::kInt && v->i == 1) ||
        (n == "version" && base == "composite" && v->kind == Attr::Kind::kInt && v->i == 0) ||
        (n.ends_with("_type") && n != "fft_type" && n != "compare_type" && n != "channel_type" && IsNoneType(m, v)) ||
        ((n == "lhs_component_count" || n == "rhs_component_count" || n == "num_primitive_operations" ||
          n == "allow_imprecise_accumulation") &&
         IsNoneType(m, v))) {
      continue;
    }
    // Flags StableHLO writes as unit attributes.
    if ((n == "use_global_device_ids" || n == "has_dynamic_root") && v->kind == Attr::Kind::kBool) {
      v = m.NewAttr(Attr::Kind::kUnit);
    }
    // channel_id and channel_type are StableHLO's channel_handle.
    if (n == "channel_id" && v->kind == Attr::Kind::kInt) {
      const Attr* channel_type = op.FindAttr("channel_type");
      Attr* handle = m.NewAttr(Attr::Kind::kInt);
      handle->i = v->i;
      handle->type = m.types().Scalar(hlo::PrimitiveType::kS64);
      Attr* type = m.NewAttr(Attr::Kind::kInt);
      type->type = handle->type;
      type->i = channel_type != nullptr && channel_type->kind == Attr::Kind::kInt ? channel_type->i : 0;
      Attr* channel = m.NewAttr(Attr::Kind::kStruct);
      channel->dialect_name = "stablehlo.channel_handle";
      channel->fields = {{m.Intern("handle"), handle}, {m.Intern("type"), type}};
      kept.push_back({m.Intern("channel_handle"), channel});
      continue;
    }
    // Symbols VHLO keeps as strings.
    if ((n == "callee" || n == "decomposition") && v->kind == Attr::Kind::kString) {
      Attr* symbol = m.NewAttr(Attr::Kind::kSymbol);
      symbol->text = v->text;
      v = symbol;
    }
    if (n == "called_computations" && v->kind == Attr::Kind::kArray) {
      Attr* list = m.NewAttr(Attr::Kind::kArray);
      for (const Attr* item : v->items) {
        if (item->kind == Attr::Kind::kString) {
          Attr* symbol = m.NewAttr(Attr::Kind::kSymbol);
          symbol->text = item->text;
          item = symbol;
        }
        list->items.push_back(item);
      }
      v = list;
    }
    kept.push_back({a.name, v});
  }
  op.attrs = std::move(kept);
  return Ok();
}

Status Reader::AddFunction(Operation& op) {
  auto fn = std::make_unique<Function>();
  const Attr* type = op.FindAttr("function_type");
  const Attr* name = op.FindAttr("sym_name");
  if (type == nullptr || type->kind != Attr::Kind::kType || name == nullptr || name->kind != Attr::Kind::kString) {
    return Fail("a function without a name or type");
  }
  const TypeInfo& signature = module_.types()[type->type];
  if (signature.kind != TypeKind::kFunction) return Fail("function @" + name->text + " has no function type");
  fn->name = name->text;
  fn->arg_types = signature.members;
  fn->result_types = signature.results;
  if (const Attr* visibility = op.FindAttr("sym_visibility")) {
    fn->is_public = visibility->kind != Attr::Kind::kString || visibility->text.empty() || visibility->text == "public";
  }
  auto per_value = [&](std::string_view attr_name, size_t count, std::vector<std::vector<NamedAttr>>& out) -> Status {
    out.assign(count, {});
    const Attr* list = op.FindAttr(attr_name);
    if (list == nullptr || list->kind != Attr::Kind::kArray || list->items.empty()) return Ok();
    if (list->items.size() != count) return Fail("function @" + fn->name + " has " + std::string(attr_name) + " of another length");
    for (size_t i = 0; i < count; ++i) {
      if (list->items[i]->kind == Attr::Kind::kDict) out[i] = list->items[i]->fields;
    }
    return Ok();
  };
  KILN_RETURN_IF_ERROR(per_value("arg_attrs", fn->arg_types.size(), fn->arg_attrs));
  KILN_RETURN_IF_ERROR(per_value("res_attrs", fn->result_types.size(), fn->result_attrs));
  for (const NamedAttr& a : op.attrs) {
    if (a.name != "function_type" && a.name != "sym_name" && a.name != "sym_visibility" && a.name != "arg_attrs" &&
        a.name != "res_attrs") {
      fn->attrs.push_back(a);
    }
  }
  if (op.regions.size() != 1) return Fail("function @" + fn->name + " does not have one body");
  fn->body = std::move(op.regions[0]);
  if (!fn->body.blocks.empty() && fn->body.blocks[0]->args.size() != fn->arg_types.size()) {
    return Fail("function @" + fn->name + " takes " + std::to_string(fn->arg_types.size()) + " arguments, its body " +
                std::to_string(fn->body.blocks[0]->args.size()));
  }
  module_.functions.push_back(std::move(fn));
  return Ok();
}

}  // namespace kiln::stablehlo::bytecode
