// The structured printed form of fingerprint_corpus_test_util.h and the
// check that it reproduces PrintModule over the corpus.
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/fingerprint_corpus_test_util.h"
#include "compiler/hlo/fingerprint_test_util.h"
#include "compiler/hlo/printer.h"

namespace kiln::hlo::fingerprint_testing {
namespace {

PAttr ToPAttr(const Attribute& a) {
  PAttr p;
  p.name = a.name;
  p.kind = a.kind;
  p.value = a.value;
  p.braced = a.braced;
  for (const Computation* c : a.computations) p.refs.push_back(c->name());
  for (const Instruction* i : a.instructions) p.refs.emplace_back(i->name());
  return p;
}

// Adds whitespace after commas outside strings (attribute values, shapes and
// literals); inside brackets a newline too, every other time.
std::string Spread(std::string_view text, bool newlines) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  bool in_string = false;
  int commas = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    out.push_back(c);
    if (in_string) {
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == ',') {
      out += (newlines && (++commas % 2 == 0)) ? "\n          " : "  ";
    }
  }
  return out;
}

void EmitAttr(const PAttr& a, const Style& style, std::string& out) {
  out += a.name;
  out += '=';
  switch (a.kind) {
    case Attribute::Kind::kText:
    case Attribute::Kind::kRaw:
      out += style.fancy ? Spread(a.value, /*newlines=*/true) : a.value;
      return;
    case Attribute::Kind::kComputations:
    case Attribute::Kind::kInstructions: {
      if (a.braced) out += style.fancy ? "{ " : "{";
      for (size_t i = 0; i < a.refs.size(); ++i) {
        if (i > 0) out += style.fancy ? " ,\n   " : ", ";
        if (style.percent) out += '%';
        out += a.refs[i];
      }
      if (a.braced) out += style.fancy ? " }" : "}";
      return;
    }
  }
}

}  // namespace

PModule Structure(const Module& module) {
  PModule pm;
  pm.name = module.name();
  if (const auto& layout = module.entry_layout()) {
    std::string s = "{(";
    for (size_t i = 0; i < layout->parameters.size(); ++i) {
      if (i > 0) s += ", ";
      layout->parameters[i].AppendTo(s);
    }
    s += ")->";
    layout->result.AppendTo(s);
    s += '}';
    pm.entry_layout = std::move(s);
  }
  for (const Attribute& a : module.attributes()) pm.attrs.push_back(ToPAttr(a));

  std::unordered_set<const Computation*> reachable;
  std::vector<const Computation*> stack;
  if (module.entry() != nullptr) {
    reachable.insert(module.entry());
    stack.push_back(module.entry());
  }
  while (!stack.empty()) {
    const Computation* c = stack.back();
    stack.pop_back();
    for (const auto& instr : c->instructions()) {
      for (const Computation* callee : instr->called_computations()) {
        if (reachable.insert(callee).second) stack.push_back(callee);
      }
    }
  }

  for (const auto& comp : module.computations()) {
    PComp pc;
    pc.ir = comp.get();
    pc.entry = comp->is_entry();
    pc.reachable = reachable.contains(comp.get());
    pc.name = comp->name();
    pc.thread = comp->execution_thread();
    pc.signature = "(";
    for (const Instruction* p : comp->parameters()) {
      if (p == nullptr) continue;
      if (pc.signature.size() > 1) pc.signature += ", ";
      pc.signature += "p" + std::to_string(p->parameter_number()) + ": " + p->shape().ToString();
    }
    pc.signature += ") -> ";
    if (comp->root() != nullptr) pc.signature += comp->root()->shape().ToString();
    pc.instrs.reserve(comp->instructions().size());
    for (const auto& instr : comp->instructions()) {
      PInstr pi;
      pi.ir = instr.get();
      pi.root = instr.get() == comp->root();
      pi.name = instr->name();
      instr->shape().AppendTo(pi.shape);
      pi.opcode = instr->OpcodeText();
      if (instr->opcode() == Opcode::kParameter) {
        pi.has_args = true;
        pi.args = std::to_string(instr->parameter_number());
      } else if (instr->opcode() == Opcode::kConstant && instr->literal() != nullptr) {
        pi.has_args = true;
        pi.args = instr->literal()->ValueToString();
      } else {
        for (const Instruction* op : instr->operands()) {
          pi.operands.emplace_back(op->name());
          pi.operand_shapes.push_back(op->shape().ToString());
        }
      }
      for (const Attribute& a : instr->attributes()) pi.attrs.push_back(ToPAttr(a));
      pc.instrs.push_back(std::move(pi));
    }
    pm.comps.push_back(std::move(pc));
  }
  return pm;
}

void EmitInstr(const PInstr& in, const Style& style, std::string& out) {
  const bool f = style.fancy;
  out += f ? "    " : "  ";
  if (in.root) out += f ? "ROOT   " : "ROOT ";
  if (style.percent) out += '%';
  out += in.name;
  out += f ? "  =  /* shape */ " : " = ";
  out += f ? Spread(in.shape, false) : in.shape;
  out += f ? "   " : " ";
  out += in.opcode;
  out += f ? "( " : "(";
  if (in.has_args) {
    out += f ? Spread(in.args, true) : in.args;
  } else {
    for (size_t i = 0; i < in.operands.size(); ++i) {
      if (i > 0) out += f ? " ,\n        /* operand */ " : ", ";
      // The old form with each operand's shape before its name.
      // (Not for buffer shapes "b(...)": the parser reads "b(" there as a
      // nested instruction.)
      if (f && i < in.operand_shapes.size() && !in.operand_shapes[i].starts_with("b(")) {
        out += in.operand_shapes[i] + " ";
      }
      if (style.percent) out += '%';
      out += in.operands[i];
    }
  }
  out += f ? " )" : ")";
  for (const PAttr& a : in.attrs) {
    out += f ? ",\n        " : ", ";
    EmitAttr(a, style, out);
  }
  if (f) out += "  // end of instruction";
  out += '\n';
}

std::string Emit(const PModule& pm, const Style& style) {
  const bool f = style.fancy;
  std::string out;
  if (f) out += "// a comment before the header\n/* and a\n   block comment */\n";
  out += f ? "HloModule   " : "HloModule ";
  out += pm.name;
  if (pm.entry_layout) {
    out += f ? " ,\n    entry_computation_layout=" : ", entry_computation_layout=";
    out += f ? Spread(*pm.entry_layout, false) : *pm.entry_layout;
  }
  for (const PAttr& a : pm.attrs) {
    out += f ? " , /* header */  " : ", ";
    EmitAttr(a, style, out);
  }
  out += "\n";
  for (const PComp& c : pm.comps) {
    out += f ? "\n\n// computation\n" : "\n";
    if (c.entry) out += f ? "ENTRY   " : "ENTRY ";
    if (style.percent) out += '%';
    out += c.name;
    if (f) out += "  " + c.signature;
    out += f ? "   {   /* body */\n" : " {\n";
    for (const PInstr& in : c.instrs) {
      if (f && in.root) out += "\n  // the root\n";
      EmitInstr(in, style, out);
    }
    out += f ? "  }" : "}";
    if (!c.thread.empty()) {
      out += f ? " ,  execution_thread=\"" : ", execution_thread=\"";
      out += c.thread;
      out += '"';
    }
    out += "\n";
  }
  return out;
}

TEST(FingerprintCorpusTest, PrintedFormReproducesPrinterAndKey) {
  const Corpus& corpus = GetCorpus();
  CheckCorpusSize(corpus);
  std::cout << "[ corpus ] " << corpus.files << " files, " << corpus.modules.size()
            << " parse and fingerprint, " << corpus.unparsed.size() << " skipped\n";
  for (const std::string& u : corpus.unparsed) std::cout << "  skipped " << u.substr(0, 200) << "\n";
  size_t checked = 0;
  for (const CorpusModule& cm : corpus.modules) {
    // The test's own printer must agree with PrintModule, or the rewrites
    // below would test something else.
    std::string printed = PrintModule(*cm.module);
    ASSERT_EQ(Emit(Structure(*cm.module)), printed) << cm.path;
    std::optional<Fingerprint> fp = MustFingerprint(printed, cm.path);
    if (fp) ExpectSameFingerprint(cm.fp, *fp, cm.path + ": printing changed the fingerprint");
    ++checked;
  }
  EXPECT_GE(checked, kMinCorpusModules);
}

}  // namespace kiln::hlo::fingerprint_testing
