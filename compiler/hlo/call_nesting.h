// How deeply computations may call one another.
//
// A computation's nesting level is 1 when it calls nothing, else one more
// than the deepest computation it calls (through call, fusion calls=, while
// condition/body, conditional branches, to_apply, async wrapped calls, ...).
// Many walkers follow called computations recursively: the fingerprint, the
// evaluator (a while body calling a reduce whose to_apply calls ...), the
// timing model, the cost model. Their stack use grows with the nesting level,
// so the parser rejects a module nested deeper than kMaxCallNesting, at the
// call that goes too deep, and the verifier rejects modules built in memory
// the same way. Everything downstream may then recurse once per level.
//
// Real XLA modules nest a few levels (a while loop in a conditional branch
// calling a fused reduce); the deepest module of the test corpus
// (xla-evaluator RecursiveCondGetTupleElement) nests 4. 256 leaves ample room
// and keeps the deepest walk (the evaluator, a few KiB per level) well inside
// the smallest thread stack kiln runs on (glibc's 2 MiB default when the
// stack limit is unlimited), also in sanitizer builds.
#pragma once

namespace kiln::hlo {

inline constexpr int kMaxCallNesting = 256;

}  // namespace kiln::hlo
