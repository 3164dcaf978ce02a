// The corpus fixture and the structured printed form shared by the corpus
// fingerprint tests (fingerprint_corpus*_test.cc). Test-only code; failures
// are reported through GoogleTest. GetCorpus loads once and is then
// read-only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/module.h"
#include "compiler/hlo/test_corpus.h"

namespace kiln::hlo::fingerprint_testing {

// --- Structured printed form (fingerprint_printed_form_test.cc) -------------
//
// The corpus tests rewrite the printer's output. Rather than edit text with
// regular expressions, they rebuild it from a structure that mirrors the
// printer (checked to reproduce PrintModule byte for byte), edit the
// structure and print it again, plainly or with extra whitespace and
// comments.

struct PAttr {
  std::string name;
  Attribute::Kind kind = Attribute::Kind::kText;
  std::string value;              // kText, kRaw
  std::vector<std::string> refs;  // kComputations, kInstructions
  bool braced = false;
};

struct PInstr {
  const Instruction* ir = nullptr;  // in the module this was built from
  bool root = false;
  std::string name;
  std::string shape;
  std::string opcode;
  bool has_args = false;  // parameter number or literal in `args`
  std::string args;
  std::vector<std::string> operands;
  std::vector<std::string> operand_shapes;  // for the old typed-operand form
  std::vector<PAttr> attrs;
};

struct PComp {
  const Computation* ir = nullptr;
  bool entry = false;
  bool reachable = false;  // from the entry, through called computations
  std::string name;
  std::string signature;  // "(p0: f32[2]) -> f32[2]", informative in HLO text
  std::string thread;
  std::vector<PInstr> instrs;
};

struct PModule {
  std::string name;
  std::optional<std::string> entry_layout;  // "{(...)->...}"
  std::vector<PAttr> attrs;
  std::vector<PComp> comps;
};

// The structure of `module`, as PrintModule would print it.
PModule Structure(const Module& module);

// Printing options. `fancy` adds whitespace, newlines and comments wherever
// HLO text allows them, which must not change the key.
// `percent` = false writes names without '%' (valid for the names
// RenameAll gives).
struct Style {
  bool fancy = false;
  bool percent = true;
};

// Appends one instruction line to `out`.
void EmitInstr(const PInstr& in, const Style& style, std::string& out);
// The module text; with the default style, byte for byte PrintModule's.
std::string Emit(const PModule& pm, const Style& style = {});

// --- Corpus (fingerprint_corpus_test.cc) ------------------------------------

struct CorpusModule {
  std::string path;  // relative to the corpus root
  size_t bytes = 0;
  std::unique_ptr<Module> module;
  Fingerprint fp;
};

struct Corpus {
  std::vector<CorpusModule> modules;  // those that parse and fingerprint
  std::vector<std::string> unparsed;  // "path: error"
  size_t files = 0;
};

// Below this, a module is checked fully; above, the expensive mutations are
// limited (the corpus has a few 3-4 MB modules).
inline constexpr size_t kLargeModuleBytes = 1 << 20;
// Fewer loaded modules fail the test.
inline constexpr size_t kMinCorpusModules = hlo::testing::kMinValidCorpusModules;

// Every .hlo file under KILN_CORPUS_DIR/hlo, parsed and fingerprinted once.
const Corpus& GetCorpus();
// Fails the test when fewer than kMinCorpusModules modules loaded.
void CheckCorpusSize(const Corpus& corpus);
// A per-module, per-test random seed.
uint64_t SeedFor(const std::string& path, uint64_t salt);
// Fingerprint of text that must parse; failures are reported against `what`.
std::optional<Fingerprint> MustFingerprint(const std::string& text, const std::string& what);

}  // namespace kiln::hlo::fingerprint_testing
