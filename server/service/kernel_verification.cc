#include "server/service/kernel_verification.h"

#include <algorithm>
#include <optional>
#include <map>
#include <numeric>
#include <set>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "compiler/hlo/module.h"
#include "runtime/eval/evaluator.h"
#include "runtime/io/literal_compare.h"
#include "runtime/io/random_inputs.h"

namespace kiln::service {
namespace {

// Names lowering gives its own helper values (tuple parts of an input or
// an output): they are no entry instruction.
bool IsHelper(std::string_view name) { return name.starts_with("kiln."); }

// What one kernel reads and writes, by entry instruction name.
struct KernelNames {
  std::vector<std::string> inputs;   // per kernel parameter
  std::vector<std::string> outputs;  // per output array; "" for a tuple's part
  std::vector<std::string> defined;  // entry instructions the kernel computes
  bool tuple_input = false;          // an input arrives as a tuple's arrays
};

KernelNames NamesOf(const hlo::Module& module) {
  const hlo::Computation& entry = *module.entry();
  KernelNames names;
  names.inputs.resize(entry.parameters().size());
  for (const hlo::Instruction* parameter : entry.parameters()) {
    const std::string_view name = parameter->name();
    if (IsHelper(name)) names.tuple_input = true;
    names.inputs[static_cast<size_t>(parameter->parameter_number())] = std::string(name);
  }
  for (const auto& instr : entry.instructions()) {
    if (instr->opcode() == hlo::Opcode::kParameter || IsHelper(instr->name())) continue;
    names.defined.emplace_back(instr->name());
  }
  const hlo::Instruction* root = entry.root();
  auto output = [](const hlo::Instruction* value) { return IsHelper(value->name()) ? "" : std::string(value->name()); };
  if (root->name() == "kiln.outputs") {
    for (const hlo::Instruction* operand : root->operands()) names.outputs.push_back(output(operand));
  } else {
    names.outputs.push_back(output(root));
  }
  return names;
}

int64_t ArrayBytes(const hlo::Shape& shape) {
  if (!shape.IsArray()) return 0;
  return shape.ElementCount() * hlo::HostByteWidth(shape.element_type());
}

// FNV-1a: a stable per-value seed, so both sides and every run agree.
uint64_t NameSeed(std::string_view name, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// One changed kernel of one side.
struct Node {
  const runtime::LoadedProgram* program;
  size_t kernel;
  bool reference;
  KernelNames names;
};

struct UnionFind {
  std::vector<size_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  size_t Find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Join(size_t a, size_t b) { parent[Find(a)] = Find(b); }
};

const std::string& KernelName(const Node& node) { return node.program->program().kernels[node.kernel].name; }

// The reason of a region that cannot be checked here (not a difference).
constexpr std::string_view kRegionRefused = "region_refused";

Error Unverifiable(const Node& first, const std::string& why) {
  return FailedPreconditionError("the changed kernels from " + KernelName(first) +
                                 " cannot be checked kernel by kernel: " + why)
      .WithReason(std::string(kRegionRefused));
}

// Evaluates one side of a region: its kernels in program order, each on
// the values named by its parameters. Fills `values` with what they write.
Status EvaluateSide(const std::vector<const Node*>& nodes, std::map<std::string, hlo::Literal>& values,
                    std::set<std::string>& written, const KernelVerificationOptions& options) {
  int64_t charged = 0;
  for (const Node* node : nodes) {
    if (options.before_kernel) KILN_RETURN_IF_ERROR(options.before_kernel());
    const hlo::Module& module = node->program->kernel_module(node->kernel);
    if (Status evaluable = runtime::CheckEvaluable(module); !evaluable) {
      return Unverifiable(*node, "kernel " + KernelName(*node) + ": " + evaluable.error().ToString());
    }
    std::vector<hlo::Literal> args;
    args.reserve(node->names.inputs.size());
    for (const std::string& name : node->names.inputs) {
      auto it = values.find(name);
      if (it == values.end()) {
        return Unverifiable(*node, "kernel " + KernelName(*node) + " reads %" + name + " before it is computed");
      }
      args.push_back(it->second);
    }
    runtime::EvalOptions eval;
    eval.step_budget = std::max<int64_t>(options.step_budget - charged, 1);
    eval.units_charged = &charged;
    Result<hlo::Literal> result = runtime::EvaluateModule(module, args, eval);
    if (!result) return Unverifiable(*node, "evaluating kernel " + KernelName(*node) + ": " + result.error().ToString());
    std::vector<hlo::Literal> arrays;
    if (node->names.outputs.size() == 1) {
      arrays.push_back(*std::move(result));
    } else {
      arrays = result->ReleaseTupleElements();
    }
    if (arrays.size() != node->names.outputs.size()) {
      return InternalError("kernel " + KernelName(*node) + " wrote " + std::to_string(arrays.size()) +
                           " arrays, its root names " + std::to_string(node->names.outputs.size()));
    }
    for (size_t i = 0; i < arrays.size(); ++i) {
      const std::string& name = node->names.outputs[i];
      if (name.empty()) continue;
      values.insert_or_assign(name, std::move(arrays[i]));
      written.insert(name);
    }
  }
  return Ok();
}

// Checks one region: `nodes` of both sides, each side in program order.
Status VerifyRegion(const std::vector<const Node*>& nodes, const KernelVerificationOptions& options,
                    int64_t& compared) {
  std::vector<const Node*> sides[2];
  std::set<std::string> defined[2];
  std::map<std::string, const hlo::Shape*> reads;
  int64_t bytes = 0;
  for (const Node* node : nodes) {
    const int side = node->reference ? 0 : 1;
    sides[side].push_back(node);
    if (node->names.tuple_input) return Unverifiable(*nodes.front(), "kernel " + KernelName(*node) + " reads a tuple");
    defined[side].insert(node->names.defined.begin(), node->names.defined.end());
    const hlo::Computation& entry = *node->program->kernel_module(node->kernel).entry();
    for (const hlo::Instruction* parameter : entry.parameters()) {
      reads.try_emplace(std::string(parameter->name()), &parameter->shape());
    }
    // What each side keeps: every array its kernels write, once.
    const hlo::Instruction* root = entry.root();
    if (root->name() == "kiln.outputs") {
      for (const hlo::Instruction* operand : root->operands()) bytes += ArrayBytes(operand->shape());
    } else {
      bytes += ArrayBytes(root->shape());
    }
  }
  if (defined[0] != defined[1]) {
    for (const std::string& name : defined[0]) {
      if (!defined[1].contains(name)) {
        return Unverifiable(*nodes.front(), "%" + name + " is computed in a kernel the heuristic's program keeps");
      }
    }
    for (const std::string& name : defined[1]) {
      if (!defined[0].contains(name)) {
        return Unverifiable(*nodes.front(), "%" + name + " is computed in a kernel the candidate keeps");
      }
    }
  }
  // ... and each side its own copy of the values read from outside.
  for (const auto& [name, shape] : reads) {
    if (!defined[0].contains(name)) bytes += 2 * ArrayBytes(*shape);
  }
  if (bytes > options.memory_budget) {
    return Unverifiable(*nodes.front(), "the values of their " + std::to_string(sides[1].size()) +
                                            " kernels (and the heuristic's " + std::to_string(sides[0].size()) +
                                            ") need " + std::to_string(bytes) + " bytes, over the " +
                                            std::to_string(options.memory_budget) + "-byte evaluation budget");
  }
  // The same random value for each instruction read from outside.
  std::map<std::string, hlo::Literal> inputs;
  for (const auto& [name, shape] : reads) {
    if (defined[0].contains(name)) continue;
    KILN_ASSIGN_OR_RETURN(hlo::Literal value, runtime::io::RandomLiteral(*shape, NameSeed(name, options.seed)));
    inputs.emplace(name, std::move(value));
  }
  std::map<std::string, hlo::Literal> values[2] = {inputs, std::move(inputs)};
  std::set<std::string> written[2];
  for (int side = 0; side < 2; ++side) {
    KILN_RETURN_IF_ERROR(EvaluateSide(sides[side], values[side], written[side], options));
  }
  int64_t here = 0;
  for (const std::string& name : written[1]) {
    if (!written[0].contains(name)) continue;
    Status same = runtime::io::CompareLiterals(values[0].at(name), values[1].at(name));
    if (!same) {
      return FailedPreconditionError("%" + name + " from the candidate's kernels differs from the heuristic's: " +
                                     same.error().ToString());
    }
    ++here;
  }
  if (here == 0) return Unverifiable(*nodes.front(), "no value leaves both programs' kernels");
  compared += here;
  return Ok();
}

}  // namespace

Result<KernelVerification> VerifyChangedKernels(const runtime::LoadedProgram& reference,
                                                const runtime::LoadedProgram& candidate,
                                                const KernelVerificationOptions& options) {
  const runtime::LoadedProgram* programs[2] = {&reference, &candidate};
  std::unordered_set<std::string_view> texts[2];
  for (int side = 0; side < 2; ++side) {
    for (const runtime::ProgramKernel& k : programs[side]->program().kernels) texts[side].insert(k.hlo);
  }
  std::vector<Node> nodes;
  for (int side = 0; side < 2; ++side) {
    const auto& kernels = programs[side]->program().kernels;
    for (size_t k = 0; k < kernels.size(); ++k) {
      if (texts[1 - side].contains(kernels[k].hlo)) continue;
      nodes.push_back(Node{programs[side], k, side == 0, NamesOf(programs[side]->kernel_module(k))});
    }
  }
  KernelVerification out;
  for (const Node& node : nodes) {
    if (!node.reference) {
      ++out.changed_kernels;
      out.kernels.push_back(KernelName(node));
    }
  }
  if (nodes.empty()) return out;

  // Kernels that compute a common instruction belong to one region.
  UnionFind groups(nodes.size());
  std::map<std::string_view, size_t> definer;
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (const std::string& name : nodes[n].names.defined) {
      auto [it, inserted] = definer.try_emplace(name, n);
      if (!inserted) groups.Join(n, it->second);
    }
  }
  std::map<size_t, std::vector<const Node*>> regions;  // nodes stay in program order per side
  for (size_t n = 0; n < nodes.size(); ++n) regions[groups.Find(n)].push_back(&nodes[n]);
  for (const auto& [root, members] : regions) {
    Status checked = VerifyRegion(members, options, out.compared_values);
    if (checked) {
      ++out.regions;
      continue;
    }
    if (checked.error().reason() != kRegionRefused) return std::unexpected(checked.error());
    if (out.refused_why.empty()) out.refused_why = checked.error().message;
    for (const Node* node : members) {
      out.refused_instructions.insert(out.refused_instructions.end(), node->names.defined.begin(),
                                      node->names.defined.end());
    }
  }
  std::sort(out.refused_instructions.begin(), out.refused_instructions.end());
  out.refused_instructions.erase(std::unique(out.refused_instructions.begin(), out.refused_instructions.end()),
                                 out.refused_instructions.end());
  return out;
}

Result<KernelVerification> VerifyModulePairs(const std::vector<ModuleCheck>& checks,
                                             const KernelVerificationOptions& options) {
  KernelVerification out;
  for (const ModuleCheck& check : checks) {
    ++out.changed_kernels;
    out.kernels.push_back(check.name);
    auto refuse = [&](const std::string& why) {
      if (out.refused_why.empty()) out.refused_why = "body kernel " + check.name + " cannot be checked: " + why;
      out.refused_instructions.insert(out.refused_instructions.end(), check.instructions.begin(),
                                      check.instructions.end());
    };
    const hlo::Module* sides[2] = {check.reference, check.candidate};
    const hlo::Computation& entry = *check.reference->entry();
    if (entry.parameters().size() != check.candidate->entry()->parameters().size()) {
      return InternalError("body kernel " + check.name + ": its two sides read different parameters");
    }
    int64_t bytes = 2 * ArrayBytes(entry.root()->shape());
    for (const hlo::Instruction* parameter : entry.parameters()) bytes += 2 * ArrayBytes(parameter->shape());
    if (entry.root()->shape().IsTuple()) {
      for (const hlo::Shape& part : entry.root()->shape().tuple_shapes()) bytes += 2 * ArrayBytes(part);
    }
    if (bytes > options.memory_budget) {
      refuse("its values need " + std::to_string(bytes) + " bytes, over the " + std::to_string(options.memory_budget) +
             "-byte evaluation budget");
      continue;
    }
    std::vector<hlo::Literal> args;
    for (const hlo::Instruction* parameter : entry.parameters()) {
      KILN_ASSIGN_OR_RETURN(hlo::Literal value,
                            runtime::io::RandomLiteral(parameter->shape(),
                                                       NameSeed(std::to_string(parameter->parameter_number()), options.seed)));
      args.push_back(std::move(value));
    }
    std::optional<hlo::Literal> values[2];
    bool refused = false;
    for (int side = 0; side < 2 && !refused; ++side) {
      if (options.before_kernel) KILN_RETURN_IF_ERROR(options.before_kernel());
      if (Status evaluable = runtime::CheckEvaluable(*sides[side]); !evaluable) {
        refuse(evaluable.error().ToString());
        refused = true;
        break;
      }
      runtime::EvalOptions eval;
      eval.step_budget = options.step_budget;
      Result<hlo::Literal> result = runtime::EvaluateModule(*sides[side], args, eval);
      if (!result) {
        refuse("evaluating it: " + result.error().ToString());
        refused = true;
        break;
      }
      values[side] = *std::move(result);
    }
    if (refused) continue;
    Status same = runtime::io::CompareLiterals(*values[0], *values[1]);
    if (!same) {
      return FailedPreconditionError("body kernel " + check.name +
                                     " computes other values than its instructions evaluated directly: " +
                                     same.error().ToString());
    }
    ++out.regions;
    ++out.compared_values;
  }
  return out;
}

}  // namespace kiln::service
