// Decoders for replica groups (explicit and iota forms) and source-target
// pairs (op_attributes.h).
#include "compiler/hlo/op_attributes.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/hlo/lexer.h"
#include "compiler/hlo/op_attributes_util.h"

namespace kiln::hlo {

using op_attributes_internal::AttrError;
using op_attributes_internal::Annotate;
using op_attributes_internal::ParseInt;
using op_attributes_internal::RequiredText;

namespace {

// `[a,b,...]` from the lexer; the '[' must be next.
Result<std::vector<int64_t>> LexSquareList(Lexer& lex) {
  if (lex.Next().kind != TokKind::kLsquare) return InvalidArgumentError("expected '['");
  std::vector<int64_t> out;
  while (true) {
    Token t = lex.Next();
    if (t.kind != TokKind::kInt) return InvalidArgumentError("expected an integer in [...]");
    KILN_ASSIGN_OR_RETURN(int64_t v, ParseInt(t.text));
    out.push_back(v);
    t = lex.Next();
    if (t.kind == TokKind::kRsquare) return out;
    if (t.kind != TokKind::kComma) return InvalidArgumentError("expected ',' or ']'");
  }
}

Result<int64_t> Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > (int64_t{1} << 24)) {
      return InvalidArgumentError("iota replica group list is too large or negative");
    }
  }
  return n;
}

// `[G,S]<=[r0,r1,...]T(p0,p1,...)`: iota over the reshape dims, transposed by
// the permutation, read out in row-major order as G groups of S.
Result<std::vector<std::vector<int64_t>>> ParseIotaGroups(std::string_view text) {
  Lexer lex(text);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> group_dims, LexSquareList(lex));
  if (lex.Next().kind != TokKind::kLeq) return InvalidArgumentError("expected '<=' in iota replica groups");
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> reshape, LexSquareList(lex));
  std::vector<int64_t> perm(reshape.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  Token t = lex.Next();
  if (t.kind == TokKind::kIdent && t.text == "T") {
    if (lex.Next().kind != TokKind::kLparen) return InvalidArgumentError("expected '(' after T");
    perm.clear();
    while (true) {
      Token n = lex.Next();
      if (n.kind != TokKind::kInt) return InvalidArgumentError("expected an integer in T(...)");
      KILN_ASSIGN_OR_RETURN(int64_t v, ParseInt(n.text));
      perm.push_back(v);
      n = lex.Next();
      if (n.kind == TokKind::kRparen) break;
      if (n.kind != TokKind::kComma) return InvalidArgumentError("expected ',' or ')' in T(...)");
    }
    t = lex.Next();
  }
  if (t.kind != TokKind::kEof) return InvalidArgumentError("unexpected text after iota replica groups");
  if (group_dims.size() < 1) return InvalidArgumentError("iota replica groups need a group shape");
  KILN_ASSIGN_OR_RETURN(int64_t total, Product(group_dims));
  KILN_ASSIGN_OR_RETURN(int64_t reshape_total, Product(reshape));
  if (total != reshape_total) return InvalidArgumentError("iota replica group sizes do not match");
  std::vector<bool> seen(perm.size(), false);
  if (perm.size() != reshape.size()) return InvalidArgumentError("transpose permutation has the wrong rank");
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) {
      return InvalidArgumentError("invalid transpose permutation in iota replica groups");
    }
    seen[p] = true;
  }
  // Transposed dims and strides of the original (row-major) iota array.
  const size_t rank = reshape.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t i = rank; i-- > 1;) strides[i - 1] = strides[i] * reshape[i];
  std::vector<int64_t> tdims(rank), tstrides(rank), index(rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    tdims[i] = reshape[perm[i]];
    tstrides[i] = strides[perm[i]];
  }
  const int64_t group_size = group_dims.back();
  std::vector<std::vector<int64_t>> groups;
  std::vector<int64_t> current;
  for (int64_t n = 0; n < total; ++n) {
    int64_t value = 0;
    for (size_t i = 0; i < rank; ++i) value += index[i] * tstrides[i];
    current.push_back(value);
    if (static_cast<int64_t>(current.size()) == group_size) {
      groups.push_back(std::move(current));
      current.clear();
    }
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < tdims[i]) break;
      index[i] = 0;
    }
  }
  return groups;
}

}  // namespace

Result<std::vector<std::vector<int64_t>>> ParseReplicaGroups(std::string_view text) {
  if (!text.empty() && text.front() == '[') return ParseIotaGroups(text);
  return DecodeIntListList(text);
}

Result<std::vector<std::vector<int64_t>>> GetReplicaGroups(const Instruction& instr) {
  if (instr.FindAttribute("replica_groups") == nullptr) {
    return std::vector<std::vector<int64_t>>{};
  }
  KILN_ASSIGN_OR_RETURN(const std::pmr::string* text, RequiredText(instr, "replica_groups"));
  return Annotate(instr, "replica_groups", ParseReplicaGroups(*text));
}

Result<std::vector<std::pair<int64_t, int64_t>>> GetSourceTargetPairs(const Instruction& instr) {
  std::vector<std::pair<int64_t, int64_t>> out;
  if (instr.FindAttribute("source_target_pairs") == nullptr) return out;
  KILN_ASSIGN_OR_RETURN(const std::pmr::string* text, RequiredText(instr, "source_target_pairs"));
  KILN_ASSIGN_OR_RETURN(auto lists,
                        Annotate(instr, "source_target_pairs", DecodeIntListList(*text)));
  for (const auto& pair : lists) {
    if (pair.size() != 2)
      return AttrError(instr, "source_target_pairs", "expected {source,target} pairs");
    out.emplace_back(pair[0], pair[1]);
  }
  return out;
}

}  // namespace kiln::hlo
