// How deeply computations may call one another.
//
// A computation's nesting level is 1 when it calls nothing, else one more
// than the deepest computation it calls (through call, fusion calls=, while
// condition/body, conditional branches, to_apply, async wrapped calls, ...).
// Some walkers follow called computations recursively: the evaluator (a
// while body calling a reduce whose to_apply calls ...), the timing model,
// the cost model. Their stack use grows with the nesting level, so the parser
// rejects a module nested deeper than kMaxCallNesting, at the call that goes
// too deep, and the verifier rejects modules built in memory the same way.
// Everything downstream may then recurse once per level. (The fingerprint,
// which the server runs first on every request, walks the call graph without
// recursion.)
//
// Real XLA modules nest a few levels (a while loop in a conditional branch
// calling a fused reduce); the deepest module of the test corpus
// (xla-evaluator RecursiveCondGetTupleElement) nests 4. 128 leaves ample
// room and keeps the deepest walk, the evaluator (about 2 KiB of stack per
// level, 11 KiB under AddressSanitizer), within the smallest stack a kiln
// thread gets by default: glibc's 2 MiB when the stack limit is unlimited,
// else the limit (8 MiB usually) for std::thread, the worker pools and libuv.
#pragma once

namespace kiln::hlo {

inline constexpr int kMaxCallNesting = 128;

}  // namespace kiln::hlo
