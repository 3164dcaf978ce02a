// Rewrites every corpus module's printed form in ways the key must ignore
// (names, metadata, instruction order, computation order, attribute order,
// whitespace, comments, '%' sigils, channel id numbers), re-parses it and
// compares keys and sub-hashes. Counts go to stdout.
#include <algorithm>
#include <functional>
#include <iostream>
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

namespace kiln::hlo::fingerprint_testing {
namespace {

// Renames every instruction, every computation and the module, injectively
// and consistently, to names in a random order.
void RenameAll(PModule& pm, std::mt19937_64& rng) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  auto note = [&](const std::string& n) {
    if (seen.insert(n).second) names.push_back(n);
  };
  for (const PComp& c : pm.comps) {
    note(c.name);
    for (const PInstr& in : c.instrs) note(in.name);
  }
  std::shuffle(names.begin(), names.end(), rng);
  std::unordered_map<std::string, std::string> fresh;
  fresh.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) fresh[names[i]] = "n" + std::to_string(i) + ".r";
  auto rename = [&](std::string& n) {
    auto it = fresh.find(n);
    ASSERT_NE(it, fresh.end()) << n;
    n = it->second;
  };
  pm.name = "renamed_module";
  for (PComp& c : pm.comps) {
    rename(c.name);
    for (PInstr& in : c.instrs) {
      rename(in.name);
      for (std::string& op : in.operands) rename(op);
      for (PAttr& a : in.attrs) {
        for (std::string& r : a.refs) rename(r);
      }
    }
  }
}

// Drops metadata, statistics and origin everywhere. Returns how many.
int DropNonSemantic(PModule& pm) {
  int dropped = 0;
  auto drop = [&](std::vector<PAttr>& attrs) {
    size_t before = attrs.size();
    std::erase_if(attrs, [](const PAttr& a) { return IsNonSemanticAttribute(a.name); });
    dropped += static_cast<int>(before - attrs.size());
  };
  drop(pm.attrs);
  for (PComp& c : pm.comps) {
    for (PInstr& in : c.instrs) drop(in.attrs);
  }
  return dropped;
}

bool Uses(const PInstr& user, const std::string& name) {
  for (const std::string& op : user.operands) {
    if (op == name) return true;
  }
  for (const PAttr& a : user.attrs) {
    if (a.kind != Attribute::Kind::kInstructions) continue;
    for (const std::string& r : a.refs) {
      if (r == name) return true;
    }
  }
  return false;
}

// Swaps up to `max_swaps` pairs of adjacent instructions where neither uses
// the other (the ROOT marker moves with its instruction). Returns the count.
int SwapAdjacentIndependent(PModule& pm, std::mt19937_64& rng, int max_swaps) {
  std::vector<std::pair<size_t, size_t>> sites;
  for (size_t c = 0; c < pm.comps.size(); ++c) {
    for (size_t i = 0; i + 1 < pm.comps[c].instrs.size(); ++i) sites.emplace_back(c, i);
  }
  std::shuffle(sites.begin(), sites.end(), rng);
  int swaps = 0;
  for (auto [c, i] : sites) {
    if (swaps >= max_swaps) break;
    auto& instrs = pm.comps[c].instrs;
    if (Uses(instrs[i + 1], instrs[i].name) || Uses(instrs[i], instrs[i + 1].name)) continue;
    std::swap(instrs[i], instrs[i + 1]);
    ++swaps;
  }
  return swaps;
}

// Rewrites every computation in a random topological order of its operand
// and control edges. Returns how many instructions moved.
int ShuffleTopologically(PModule& pm, std::mt19937_64& rng) {
  int moved = 0;
  for (PComp& c : pm.comps) {
    const size_t n = c.instrs.size();
    std::unordered_map<std::string_view, size_t> index;
    index.reserve(n);
    for (size_t i = 0; i < n; ++i) index.emplace(c.instrs[i].name, i);
    std::vector<std::vector<size_t>> users(n);
    std::vector<size_t> pending(n, 0);
    for (size_t i = 0; i < n; ++i) {
      std::vector<size_t> deps;
      for (const std::string& op : c.instrs[i].operands) deps.push_back(index.at(op));
      for (const PAttr& a : c.instrs[i].attrs) {
        if (a.kind != Attribute::Kind::kInstructions) continue;
        for (const std::string& r : a.refs) deps.push_back(index.at(r));
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      pending[i] = deps.size();
      for (size_t d : deps) users[d].push_back(i);
    }
    std::vector<size_t> ready;
    for (size_t i = 0; i < n; ++i) {
      if (pending[i] == 0) ready.push_back(i);
    }
    std::vector<PInstr> order;
    order.reserve(n);
    while (!ready.empty()) {
      size_t pick = std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng);
      std::swap(ready[pick], ready.back());
      size_t i = ready.back();
      ready.pop_back();
      if (i != order.size()) ++moved;
      for (size_t u : users[i]) {
        if (--pending[u] == 0) ready.push_back(u);
      }
      order.push_back(std::move(c.instrs[i]));
    }
    if (order.size() != n) {
      ADD_FAILURE() << "cycle in computation %" << c.name;
      return moved;
    }
    c.instrs = std::move(order);
  }
  return moved;
}

// Gives every distinct channel id a new number (consistently, in reverse
// order of first use). Returns how many attributes were rewritten.
int RenumberChannelIds(PModule& pm) {
  std::vector<std::string> distinct;
  std::unordered_map<std::string, size_t> slot;
  auto for_each = [&](auto&& fn) {
    for (PComp& c : pm.comps) {
      for (PInstr& in : c.instrs) {
        for (PAttr& a : in.attrs) {
          if (a.name == "channel_id" && a.kind == Attribute::Kind::kText) fn(a);
        }
      }
    }
  };
  for_each([&](PAttr& a) {
    if (slot.emplace(a.value, distinct.size()).second) distinct.push_back(a.value);
  });
  int rewritten = 0;
  for_each([&](PAttr& a) {
    a.value = std::to_string(1000 + 7 * (distinct.size() - slot.at(a.value)));
    ++rewritten;
  });
  return rewritten;
}

// Shuffles the attributes of every instruction and of the header.
int ShuffleAttributes(PModule& pm, std::mt19937_64& rng) {
  int shuffled = 0;
  auto shuffle = [&](std::vector<PAttr>& attrs) {
    if (attrs.size() < 2) return;
    std::shuffle(attrs.begin(), attrs.end(), rng);
    ++shuffled;
  };
  shuffle(pm.attrs);
  for (PComp& c : pm.comps) {
    for (PInstr& in : c.instrs) shuffle(in.attrs);
  }
  return shuffled;
}

// Puts the computations in a random order that still defines callees
// before callers. Returns how many moved.
int ShuffleComputations(PModule& pm, std::mt19937_64& rng) {
  const size_t n = pm.comps.size();
  std::unordered_map<std::string_view, size_t> index;
  for (size_t i = 0; i < n; ++i) index.emplace(pm.comps[i].name, i);
  std::vector<std::vector<size_t>> callers(n);
  std::vector<size_t> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::set<size_t> callees;
    for (const PInstr& in : pm.comps[i].instrs) {
      for (const PAttr& a : in.attrs) {
        if (a.kind != Attribute::Kind::kComputations) continue;
        for (const std::string& r : a.refs) callees.insert(index.at(r));
      }
    }
    pending[i] = callees.size();
    for (size_t c : callees) callers[c].push_back(i);
  }
  std::vector<size_t> ready;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  std::vector<PComp> order;
  int moved = 0;
  while (!ready.empty()) {
    size_t pick = std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng);
    std::swap(ready[pick], ready.back());
    size_t i = ready.back();
    ready.pop_back();
    if (i != order.size()) ++moved;
    for (size_t u : callers[i]) {
      if (--pending[u] == 0) ready.push_back(u);
    }
    order.push_back(std::move(pm.comps[i]));
  }
  if (order.size() != n) {
    ADD_FAILURE() << "call graph has a cycle";
    return moved;
  }
  pm.comps = std::move(order);
  return moved;
}

// Runs `rewrite` on the structured form of every corpus module and checks
// that the printed result has the original fingerprint. `rewrite` returns how
// many edits it made (for the report).
template <typename Rewrite>
void CheckInvariance(const char* what, Rewrite rewrite, Style style = {}) {
  const Corpus& corpus = GetCorpus();
  CheckCorpusSize(corpus);
  size_t checked = 0, edited_modules = 0, failures = 0;
  long long edits = 0;
  for (const CorpusModule& cm : corpus.modules) {
    PModule pm = Structure(*cm.module);
    std::mt19937_64 rng(SeedFor(cm.path, std::hash<std::string_view>{}(what)));
    int n = rewrite(pm, rng, cm);
    edits += n;
    if (n > 0) ++edited_modules;
    std::optional<Fingerprint> fp = MustFingerprint(Emit(pm, style), cm.path + " (" + what + ")");
    ++checked;
    if (!fp) {
      ++failures;
      continue;
    }
    if (fp->key != cm.fp.key) ++failures;
    ExpectSameFingerprint(cm.fp, *fp, cm.path + ": " + what + " changed the fingerprint");
    if (failures > 20) {
      FAIL() << "too many failures; stopping";
    }
  }
  std::cout << "[ invariance ] " << what << ": " << checked << " modules checked, "
            << edited_modules << " edited, " << edits << " edits, " << failures
            << " key changes\n";
  EXPECT_GE(checked, kMinCorpusModules);
}

TEST(FingerprintCorpusTest, RenamingInstructionsAndComputationsKeepsKey) {
  CheckInvariance("rename", [](PModule& pm, std::mt19937_64& rng, const CorpusModule&) {
    RenameAll(pm, rng);
    return 1;
  });
}

TEST(FingerprintCorpusTest, DroppingMetadataKeepsKey) {
  CheckInvariance("drop metadata/statistics/origin",
                  [](PModule& pm, std::mt19937_64&, const CorpusModule&) {
                    return DropNonSemantic(pm);
                  });
}

TEST(FingerprintCorpusTest, SwappingAdjacentIndependentInstructionsKeepsKey) {
  CheckInvariance("swap adjacent independent instructions",
                  [](PModule& pm, std::mt19937_64& rng, const CorpusModule&) {
                    return SwapAdjacentIndependent(pm, rng, 12);
                  });
}

TEST(FingerprintCorpusTest, RandomTopologicalOrderKeepsKey) {
  CheckInvariance("random topological order",
                  [](PModule& pm, std::mt19937_64& rng, const CorpusModule&) {
                    return ShuffleTopologically(pm, rng);
                  });
}

TEST(FingerprintCorpusTest, WhitespaceAndCommentsKeepKey) {
  CheckInvariance(
      "whitespace and comments",
      [](PModule&, std::mt19937_64&, const CorpusModule&) { return 1; }, Style{.fancy = true});
}

TEST(FingerprintCorpusTest, RenumberingChannelIdsKeepsKey) {
  CheckInvariance("renumber channel ids", [](PModule& pm, std::mt19937_64&, const CorpusModule&) {
    return RenumberChannelIds(pm);
  });
}

TEST(FingerprintCorpusTest, ShufflingAttributesKeepsKey) {
  CheckInvariance("shuffle attribute order", [](PModule& pm, std::mt19937_64& rng, const CorpusModule&) {
    return ShuffleAttributes(pm, rng);
  });
}

TEST(FingerprintCorpusTest, ReorderingComputationsKeepsKey) {
  CheckInvariance("reorder computations", [](PModule& pm, std::mt19937_64& rng, const CorpusModule&) {
    return ShuffleComputations(pm, rng);
  });
}

TEST(FingerprintCorpusTest, AllInvariantRewritesTogetherKeepKey) {
  // Also without '%' before names, which HLO text allows.
  CheckInvariance(
      "all rewrites together",
      [](PModule& pm, std::mt19937_64& rng, const CorpusModule&) {
        int n = RenumberChannelIds(pm) + DropNonSemantic(pm) + ShuffleAttributes(pm, rng);
        n += ShuffleTopologically(pm, rng) + ShuffleComputations(pm, rng);
        RenameAll(pm, rng);
        return n + 1;
      },
      Style{.fancy = true, .percent = false});
}

}  // namespace
}  // namespace kiln::hlo::fingerprint_testing
