// Mutates every corpus module's printed form in ways the key must see (a
// dimension, an element type, a layout, an attribute, a comparison
// direction, an opcode, a constant, the order of non-commutative operands,
// parameter numbers, a callee, backend_config, the module header) and checks
// that the key and the right sub-hashes change. Counts go to stdout.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/fingerprint_corpus_test_util.h"
#include "compiler/hlo/fingerprint_test_util.h"
#include "compiler/hlo/fingerprint_text_mutations.h"
#include "compiler/hlo/parser.h"

namespace kiln::hlo::fingerprint_testing {
namespace {

enum MutationKind {
  // Of one instruction (or two, for kParameterNumber).
  kDimension,
  kElementType,
  kLayout,
  kAttributeValue,
  kComparisonDirection,
  kOpcodeChange,
  kConstantValue,
  kOperandOrder,
  kParameterNumber,
  kCalledComputation,
  kBackendConfig,
  kNumInstructionMutations,
  // Of the module header.
  kModuleAttribute,
  kEntryLayout,
  kNumMutations,
};

constexpr const char* kMutationNames[] = {
    "dimension", "element type", "layout", "attribute value", "comparison direction",
    "opcode", "constant value", "operand order", "parameter number", "called computation",
    "backend_config", "", "module attribute", "entry layout",
};

// Each kind must be applied at least this often over the corpus.
constexpr long long kMinApplied[] = {
    /*dimension=*/1000, /*element type=*/1000, /*layout=*/600, /*attribute value=*/400,
    /*comparison direction=*/100, /*opcode=*/300, /*constant value=*/250,
    /*operand order=*/120, /*parameter number=*/300, /*called computation=*/80,
    /*backend_config=*/25, 0, /*module attribute=*/50, /*entry layout=*/80};

// Two operands that cannot hash alike (a cheap, sufficient test).
bool ObviouslyDifferent(const Instruction* a, const Instruction* b) {
  if (a->opcode() != b->opcode() || !(a->shape() == b->shape())) return true;
  if (a->opcode() == Opcode::kParameter) return a->parameter_number() != b->parameter_number();
  if (a->opcode() == Opcode::kConstant && a->literal() != nullptr && b->literal() != nullptr) {
    return !(*a->literal() == *b->literal()) && !a->literal()->elided();
  }
  return false;
}

// What a mutation may consult besides the instruction.
struct MutationContext {
  PModule pm;
  const CorpusModule& cm;
  std::unordered_map<std::string, Hash128> callee_hash;  // reachable callees by name
  std::vector<std::vector<size_t>> parameters;           // instruction indices, per computation
};

// The instructions a mutation edited, as they were, for undoing it.
using Undo = std::vector<std::pair<size_t, PInstr>>;

// Applies `kind` to instruction i of computation c when it fits (saving what
// it edits in `undo`); false when it does not apply. With dry_run, only
// says whether it would.
bool Mutate(MutationKind kind, MutationContext& ctx, size_t c, size_t i, std::mt19937_64& rng,
            bool dry_run, Undo& undo) {
  PComp& comp = ctx.pm.comps[c];
  PInstr& in = comp.instrs[i];
  std::optional<std::string> s;
  auto edit = [&](size_t j) -> PInstr& {
    undo.emplace_back(j, comp.instrs[j]);
    return comp.instrs[j];
  };
  auto set = [&](std::string PInstr::*field) {
    if (!s) return false;
    if (!dry_run) edit(i).*field = *s;
    return true;
  };
  switch (kind) {
    case kDimension:
      if (in.opcode == "constant") return false;  // the literal would not fit
      s = MutateDimension(in.shape, rng);
      return set(&PInstr::shape);
    case kElementType:
      s = MutateElementType(in.shape, rng);
      return set(&PInstr::shape);
    case kLayout:
      s = MutateLayout(in.shape, rng);
      return set(&PInstr::shape);
    case kAttributeValue:
    case kBackendConfig: {
      std::vector<size_t> attrs;
      for (size_t a = 0; a < in.attrs.size(); ++a) {
        const PAttr& attr = in.attrs[a];
        bool fits = kind == kAttributeValue
                        ? attr.kind == Attribute::Kind::kText && IsNumericSemanticAttribute(attr.name)
                        : attr.kind == Attribute::Kind::kRaw && attr.name == "backend_config";
        if (fits && std::any_of(attr.value.begin(), attr.value.end(), [](char ch) {
              return std::isdigit(static_cast<unsigned char>(ch));
            })) {
          attrs.push_back(a);
        }
      }
      if (attrs.empty()) return false;
      if (dry_run) return true;
      size_t a = Pick(attrs, rng);
      s = MutateNumberInValue(in.attrs[a].value, rng, /*inside_strings=*/kind == kBackendConfig);
      if (!s) return false;
      edit(i).attrs[a].value = *s;
      return true;
    }
    case kComparisonDirection:
      for (size_t a = 0; a < in.attrs.size(); ++a) {
        if (in.attrs[a].name == "direction" && (s = OtherDirection(in.attrs[a].value))) {
          if (!dry_run) edit(i).attrs[a].value = *s;
          return true;
        }
      }
      return false;
    case kOpcodeChange:
      s = OtherOpcode(in.opcode);
      return set(&PInstr::opcode);
    case kConstantValue:
      if (in.opcode != "constant" || !in.has_args) return false;
      s = MutateConstant(in.args);
      return set(&PInstr::args);
    case kOperandOrder:
      if (!IsNonCommutative(in.opcode) || in.operands.size() != 2 ||
          in.operands[0] == in.operands[1] ||
          !ObviouslyDifferent(in.ir->operand(0), in.ir->operand(1))) {
        return false;
      }
      if (!dry_run) std::swap(edit(i).operands[0], edit(i).operands[1]);
      return true;
    case kParameterNumber: {
      // Swap the numbers of two parameters of different shapes.
      if (in.opcode != "parameter") return false;
      std::vector<size_t> partners;
      for (size_t j : ctx.parameters[c]) {
        if (j != i && !(comp.instrs[j].ir->shape() == in.ir->shape())) {
          partners.push_back(j);
          if (dry_run) return true;
        }
      }
      if (partners.empty()) return false;
      if (dry_run) return true;
      size_t j = Pick(partners, rng);
      std::string a = in.args, b = comp.instrs[j].args;
      edit(i).args = b;
      edit(j).args = a;
      return true;
    }
    case kCalledComputation: {
      // Another reachable computation of different content, defined before
      // this one (callees come first in HLO text).
      std::vector<std::pair<size_t, size_t>> refs;  // (attribute, ref)
      for (size_t a = 0; a < in.attrs.size(); ++a) {
        if (in.attrs[a].kind != Attribute::Kind::kComputations) continue;
        for (size_t r = 0; r < in.attrs[a].refs.size(); ++r) refs.emplace_back(a, r);
      }
      std::vector<std::pair<std::pair<size_t, size_t>, std::string>> options;
      for (auto [a, r] : refs) {
        auto current = ctx.callee_hash.find(in.attrs[a].refs[r]);
        if (current == ctx.callee_hash.end()) continue;
        for (size_t k = 0; k < c; ++k) {
          const PComp& other = ctx.pm.comps[k];
          auto h = ctx.callee_hash.find(other.name);
          if (h != ctx.callee_hash.end() && h->second != current->second) {
            options.push_back({{a, r}, other.name});
            if (dry_run) return true;
          }
        }
      }
      if (options.empty()) return false;
      const auto& [where, callee] = Pick(options, rng);
      edit(i).attrs[where.first].refs[where.second] = callee;
      return true;
    }
    case kNumInstructionMutations:
    default:
      break;
  }
  return false;
}

// Module-level mutations: a header attribute or the entry layout.
bool MutateHeader(MutationKind kind, PModule& pm, std::mt19937_64& rng) {
  if (kind == kEntryLayout) {
    if (!pm.entry_layout) return false;
    std::optional<std::string> s = MutateLayout(*pm.entry_layout, rng);
    if (!s) s = MutateDimension(*pm.entry_layout, rng);
    if (!s) return false;
    pm.entry_layout = *s;
    return true;
  }
  std::vector<size_t> attrs;
  for (size_t a = 0; a < pm.attrs.size(); ++a) {
    const PAttr& attr = pm.attrs[a];
    if (IsNonSemanticAttribute(attr.name) || attr.kind == Attribute::Kind::kComputations) continue;
    bool digits = std::any_of(attr.value.begin(), attr.value.end(),
                              [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
    if (digits || attr.value.find("true") != std::string::npos ||
        attr.value.find("false") != std::string::npos) {
      attrs.push_back(a);
    }
  }
  if (attrs.empty()) return false;
  PAttr& attr = pm.attrs[Pick(attrs, rng)];
  std::optional<std::string> s = MutateNumberInValue(attr.value, rng, /*inside_strings=*/true);
  if (!s) {
    size_t t = attr.value.find("true");
    size_t f = attr.value.find("false");
    if (t != std::string::npos && (f == std::string::npos || t < f)) {
      s = attr.value.substr(0, t) + "false" + attr.value.substr(t + 4);
    } else {
      s = attr.value.substr(0, f) + "true" + attr.value.substr(f + 5);
    }
  }
  attr.value = *s;
  return true;
}

struct MutationCounts {
  long long applied[kNumMutations] = {};
  long long skipped[kNumMutations] = {};  // mutated text did not parse
  long long noop[kNumMutations] = {};     // parsed to the same value
};

// Names of the computations that call `target`, directly or through others.
using CallerCache = std::unordered_map<const Computation*, std::unordered_set<std::string>>;
const std::unordered_set<std::string>& CallersOf(const Module& module, const Computation* target,
                                                 CallerCache& cache) {
  auto [it, inserted] = cache.try_emplace(target);
  if (!inserted) return it->second;
  std::unordered_map<const Computation*, std::vector<const Computation*>> callers;
  for (const auto& comp : module.computations()) {
    for (const auto& instr : comp->instructions()) {
      for (const Computation* callee : instr->called_computations()) {
        callers[callee].push_back(comp.get());
      }
    }
  }
  std::unordered_set<const Computation*> seen = {target};
  std::vector<const Computation*> stack = {target};
  while (!stack.empty()) {
    const Computation* c = stack.back();
    stack.pop_back();
    for (const Computation* caller : callers[c]) {
      if (seen.insert(caller).second) {
        it->second.insert(caller->name());
        stack.push_back(caller);
      }
    }
  }
  return it->second;
}

std::string InstrText(const PInstr& in) {
  std::string out;
  EmitInstr(in, {}, out);
  return out.size() > 400 ? out.substr(0, 400) + "...\n" : out;
}

// Checks the sub-hashes after a mutation of instruction i of computation c:
// the computation and its callers change, nothing else; an entry parameter
// whose shape or number changed changes its parameter hash only.
void CheckSubHashes(const CorpusModule& cm, const PModule& pm, MutationKind kind, size_t c,
                    const Undo& undo, const Fingerprint& fp, CallerCache& caller_cache,
                    const std::string& site) {
  EXPECT_EQ(fp.options, cm.fp.options) << site;
  EXPECT_EQ(fp.target, cm.fp.target) << site;
  EXPECT_EQ(fp.module_config, cm.fp.module_config) << site;
  EXPECT_NE(fp.entry_body, cm.fp.entry_body) << site;
  if (kind == kCalledComputation) return;  // the set of reachable callees changes
  const PComp& comp = pm.comps[c];
  if (comp.entry) {
    EXPECT_EQ(CalledHashes(fp), CalledHashes(cm.fp)) << site;
    ASSERT_EQ(fp.parameter_shapes.size(), cm.fp.parameter_shapes.size()) << site;
    std::set<int64_t> changed_params;
    const bool shape_kind = kind == kDimension || kind == kElementType || kind == kLayout;
    for (const auto& [j, saved] : undo) {
      if (saved.ir->opcode() != Opcode::kParameter) continue;
      if (shape_kind || kind == kParameterNumber) changed_params.insert(saved.ir->parameter_number());
    }
    for (size_t p = 0; p < fp.parameter_shapes.size(); ++p) {
      EXPECT_EQ(changed_params.contains(static_cast<int64_t>(p)),
                fp.parameter_shapes[p] != cm.fp.parameter_shapes[p])
          << site << "\n  parameter " << p;
    }
    return;
  }
  EXPECT_EQ(fp.parameter_shapes, cm.fp.parameter_shapes) << site;
  ASSERT_EQ(fp.called_computations.size(), cm.fp.called_computations.size()) << site;
  const std::unordered_set<std::string>& callers = CallersOf(*cm.module, comp.ir, caller_cache);
  for (size_t j = 0; j < fp.called_computations.size(); ++j) {
    const std::string& name = fp.called_computations[j].name;
    const bool should_change = name == comp.name || callers.contains(name);
    EXPECT_EQ(should_change, fp.called_computations[j].hash != cm.fp.called_computations[j].hash)
        << site << "\n  called computation %" << name;
  }
}

// Mutates up to `per_kind` random sites of each kind (in computations
// reachable from the entry) of one module; every key must differ from the
// original and the sub-hashes move as they should.
void MutateModule(const CorpusModule& cm, int per_kind, MutationCounts& counts, int& failures) {
  MutationContext ctx{Structure(*cm.module), cm, {}, {}};
  PModule& pm = ctx.pm;
  for (const CalledComputationHash& h : cm.fp.called_computations) ctx.callee_hash[h.name] = h.hash;
  ctx.parameters.resize(pm.comps.size());
  for (size_t c = 0; c < pm.comps.size(); ++c) {
    for (size_t i = 0; i < pm.comps[c].instrs.size(); ++i) {
      if (pm.comps[c].instrs[i].opcode == "parameter") ctx.parameters[c].push_back(i);
    }
  }
  std::mt19937_64 rng(SeedFor(cm.path, 77));
  CallerCache caller_cache;

  // Parses and fingerprints mutated text; nullopt (counted) if it does not parse.
  auto reparse = [&](int k, std::unique_ptr<Module>* out) -> std::optional<Fingerprint> {
    Result<std::unique_ptr<Module>> m = ParseModule(Emit(pm), cm.path);
    if (!m) {
      ++counts.skipped[k];
      return std::nullopt;
    }
    Result<Fingerprint> fp = FingerprintModule(**m, {});
    if (!fp) {
      ++counts.skipped[k];
      return std::nullopt;
    }
    *out = std::move(*m);
    return std::move(*fp);
  };

  for (int k = 0; k < kNumInstructionMutations; ++k) {
    const MutationKind kind = static_cast<MutationKind>(k);
    std::vector<std::pair<size_t, size_t>> sites;
    Undo none;
    for (size_t c = 0; c < pm.comps.size(); ++c) {
      if (!pm.comps[c].reachable) continue;
      for (size_t i = 0; i < pm.comps[c].instrs.size(); ++i) {
        std::mt19937_64 probe_rng(1);
        if (Mutate(kind, ctx, c, i, probe_rng, /*dry_run=*/true, none)) sites.emplace_back(c, i);
      }
    }
    std::shuffle(sites.begin(), sites.end(), rng);
    int applied = 0, attempts = 0;
    for (auto [c, i] : sites) {
      if (applied >= per_kind || attempts >= 3 * per_kind) break;
      ++attempts;
      Undo undo;
      if (!Mutate(kind, ctx, c, i, rng, /*dry_run=*/false, undo)) continue;
      std::string site = cm.path + ": " + kMutationNames[k] + " in %" + pm.comps[c].name;
      for (const auto& [j, saved] : undo) {
        site += "\n  before: " + InstrText(saved) + "  after:  " + InstrText(pm.comps[c].instrs[j]);
      }
      std::unique_ptr<Module> mutated;
      std::optional<Fingerprint> fp = reparse(k, &mutated);
      for (auto it = undo.rbegin(); it != undo.rend(); ++it) pm.comps[c].instrs[it->first] = it->second;
      if (!fp) continue;
      if (kind == kConstantValue) {
        const Instruction* now = mutated->computations()[c]->instructions()[i].get();
        if (now->literal() != nullptr && *now->literal() == *pm.comps[c].instrs[i].ir->literal()) {
          ++counts.noop[k];  // e.g. rounded to the same f16 value
          continue;
        }
      }
      ++applied;
      ++counts.applied[k];
      if (fp->key == cm.fp.key) {
        ++failures;
        ADD_FAILURE() << "key did not change: " << site;
        continue;
      }
      CheckSubHashes(cm, pm, kind, c, undo, *fp, caller_cache, site);
    }
  }

  for (int k = kNumInstructionMutations + 1; k < kNumMutations; ++k) {
    const MutationKind kind = static_cast<MutationKind>(k);
    const std::optional<std::string> saved_layout = pm.entry_layout;
    const std::vector<PAttr> saved_attrs = pm.attrs;
    if (!MutateHeader(kind, pm, rng)) continue;
    std::string site = cm.path + ": " + kMutationNames[k];
    std::unique_ptr<Module> mutated;
    std::optional<Fingerprint> fp = reparse(k, &mutated);
    pm.entry_layout = saved_layout;
    pm.attrs = saved_attrs;
    if (!fp) continue;
    ++counts.applied[k];
    if (fp->key == cm.fp.key) {
      ++failures;
      ADD_FAILURE() << "key did not change: " << site;
      continue;
    }
    EXPECT_NE(fp->module_config, cm.fp.module_config) << site;
    EXPECT_EQ(fp->entry_body, cm.fp.entry_body) << site;
    EXPECT_EQ(fp->parameter_shapes, cm.fp.parameter_shapes) << site;
  }
}

// The corpus is mutated in kMutationShards interleaved shards (module i in
// shard i % kMutationShards), so the sanitizer run can take one
// (scripts/sanitize_tests.sh); the floors are split between them.
constexpr int kMutationShards = 2;

class FingerprintMutationShardTest : public ::testing::TestWithParam<int> {};

TEST_P(FingerprintMutationShardTest, MutationsChangeKey) {
  const Corpus& corpus = GetCorpus();
  CheckCorpusSize(corpus);
  MutationCounts counts;
  int failures = 0;
  size_t checked = 0;
  for (size_t i = static_cast<size_t>(GetParam()); i < corpus.modules.size(); i += kMutationShards) {
    const CorpusModule& cm = corpus.modules[i];
    MutateModule(cm, cm.bytes > kLargeModuleBytes ? 1 : 4, counts, failures);
    ++checked;
    if (failures > 20) FAIL() << "too many keys did not change; stopping";
  }
  std::cout << "[ sensitivity ] " << checked << " modules\n";
  std::cout << "  " << std::left << std::setw(22) << "mutation" << std::right << std::setw(9)
            << "applied" << std::setw(13) << "not parsed" << std::setw(8) << "no-op" << "\n";
  long long total = 0;
  for (int k = 0; k < kNumMutations; ++k) {
    if (k == kNumInstructionMutations) continue;
    std::cout << "  " << std::left << std::setw(22) << kMutationNames[k] << std::right
              << std::setw(9) << counts.applied[k] << std::setw(13) << counts.skipped[k]
              << std::setw(8) << counts.noop[k] << "\n";
    total += counts.applied[k];
  }
  std::cout << "  " << std::left << std::setw(22) << "total" << std::right << std::setw(9) << total
            << "\n";
  EXPECT_EQ(failures, 0);
  // Floors well under what the corpus gives (about half), so that a corpus
  // or parser that silently loses modules fails here.
  for (int k = 0; k < kNumMutations; ++k) {
    if (k == kNumInstructionMutations) continue;
    EXPECT_GE(counts.applied[k], kMinApplied[k] / kMutationShards) << kMutationNames[k];
  }
  EXPECT_GE(total, 5000 / kMutationShards);
}

INSTANTIATE_TEST_SUITE_P(Shards, FingerprintMutationShardTest, ::testing::Range(0, kMutationShards));

}  // namespace
}  // namespace kiln::hlo::fingerprint_testing
