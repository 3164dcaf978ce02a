// Test helper: HLO texts of pathological depth, for the robustness tests of
// every walker (parser, verifier, fingerprint, printer, passes, fusion,
// lowering, evaluator, executor, timing), and a way to run a check on a
// thread with a small stack. Header-only; not part of any library.
#pragma once

#include <pthread.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace kiln::hlo::testing {

// How each computation of a nested module reaches the next one down.
enum class Nesting { kCall, kFusion, kWhile, kConditional, kReduce, kSort, kMap };

inline std::string_view NestingName(Nesting kind) {
  switch (kind) {
    case Nesting::kCall: return "call";
    case Nesting::kFusion: return "fusion";
    case Nesting::kWhile: return "while";
    case Nesting::kConditional: return "conditional";
    case Nesting::kReduce: return "reduce";
    case Nesting::kSort: return "sort";
    case Nesting::kMap: return "map";
  }
  return "?";
}

inline constexpr Nesting kAllNestings[] = {Nesting::kCall,        Nesting::kFusion, Nesting::kWhile,
                                           Nesting::kConditional, Nesting::kReduce, Nesting::kSort,
                                           Nesting::kMap};

// A module whose computations nest exactly `levels` deep (call_nesting.h),
// the entry included: computations c0 .. c{levels-2}, each reaching the one
// before through `kind`, and an ENTRY reaching the last. The entry takes one
// f32[8] parameter. levels >= 2.
inline std::string NestedModule(Nesting kind, int levels) {
  std::string text = "HloModule nested_" + std::string(NestingName(kind)) + "\n\n";
  auto c = [](int k) { return "%c" + std::to_string(k); };
  const int chain = levels - 1;  // computations below the entry
  switch (kind) {
    case Nesting::kCall:
    case Nesting::kFusion: {
      const std::string call = kind == Nesting::kCall ? "call(%p), to_apply=" : "fusion(%p), kind=kLoop, calls=";
      text += "%c0 {\n  %p = f32[8] parameter(0)\n  ROOT %r = f32[8] negate(%p)\n}\n\n";
      for (int k = 1; k < chain; ++k) {
        text += c(k) + " {\n  %p = f32[8] parameter(0)\n  ROOT %r = f32[8] " + call + c(k - 1) + "\n}\n\n";
      }
      text += "ENTRY %main {\n  %p = f32[8] parameter(0)\n  ROOT %r = f32[8] " + call + c(chain - 1) + "\n}\n";
      return text;
    }
    case Nesting::kWhile: {
      // Each body runs the loop over the body below it once.
      const std::string state = "(s32[], f32[8])";
      text += "%cond {\n  %p = " + state +
              " parameter(0)\n  %i = s32[] get-tuple-element(%p), index=0\n"
              "  %n = s32[] constant(1)\n  ROOT %lt = pred[] compare(%i, %n), direction=LT\n}\n\n";
      text += "%c0 {\n  %p = " + state +
              " parameter(0)\n  %i = s32[] get-tuple-element(%p), index=0\n"
              "  %x = f32[8] get-tuple-element(%p), index=1\n  %one = s32[] constant(1)\n"
              "  %j = s32[] add(%i, %one)\n  %y = f32[8] negate(%x)\n  ROOT %t = " +
              state + " tuple(%j, %y)\n}\n\n";
      for (int k = 1; k < chain; ++k) {
        text += c(k) + " {\n  %p = " + state +
                " parameter(0)\n  %i = s32[] get-tuple-element(%p), index=0\n"
                "  %x = f32[8] get-tuple-element(%p), index=1\n  %zero = s32[] constant(0)\n"
                "  %one = s32[] constant(1)\n  %j = s32[] add(%i, %one)\n  %s = " +
                state + " tuple(%zero, %x)\n  %w = " + state + " while(%s), condition=%cond, body=" + c(k - 1) +
                "\n  %y = f32[8] get-tuple-element(%w), index=1\n  ROOT %t = " + state + " tuple(%j, %y)\n}\n\n";
      }
      text += "ENTRY %main {\n  %p = f32[8] parameter(0)\n  %zero = s32[] constant(0)\n  %s = " + state +
              " tuple(%zero, %p)\n  %w = " + state + " while(%s), condition=%cond, body=" + c(chain - 1) +
              "\n  ROOT %y = f32[8] get-tuple-element(%w), index=1\n}\n";
      return text;
    }
    case Nesting::kConditional: {
      text += "%c0 {\n  %p = f32[8] parameter(0)\n  ROOT %r = f32[8] negate(%p)\n}\n\n";
      auto branch = [&](int below) {
        return "  %t = pred[] constant(true)\n  ROOT %r = f32[8] conditional(%t, %p, %p), true_computation=" +
               c(below) + ", false_computation=%c0\n";
      };
      for (int k = 1; k < chain; ++k) {
        text += c(k) + " {\n  %p = f32[8] parameter(0)\n" + branch(k - 1) + "}\n\n";
      }
      text += "ENTRY %main {\n  %p = f32[8] parameter(0)\n" + branch(chain - 1) + "}\n";
      return text;
    }
    case Nesting::kReduce:
    case Nesting::kSort: {
      const bool reduce = kind == Nesting::kReduce;
      const std::string result = reduce ? "f32[]" : "pred[]";
      text += "%c0 {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %r = " + result +
              (reduce ? " add(%a, %b)" : " compare(%a, %b), direction=LT") + "\n}\n\n";
      for (int k = 1; k < chain; ++k) {
        text += c(k) + " {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %r = " + result +
                " call(%a, %b), to_apply=" + c(k - 1) + "\n}\n\n";
      }
      text += "ENTRY %main {\n  %p = f32[8] parameter(0)\n";
      if (reduce) {
        text += "  %z = f32[] constant(0)\n  ROOT %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=" +
                c(chain - 1) + "\n}\n";
      } else {
        text += "  ROOT %r = f32[8] sort(%p), dimensions={0}, to_apply=" + c(chain - 1) + "\n}\n";
      }
      return text;
    }
    case Nesting::kMap: {
      text += "%c0 {\n  %a = f32[] parameter(0)\n  ROOT %r = f32[] negate(%a)\n}\n\n";
      for (int k = 1; k < chain; ++k) {
        text += c(k) + " {\n  %a = f32[] parameter(0)\n  ROOT %r = f32[] call(%a), to_apply=" + c(k - 1) +
                "\n}\n\n";
      }
      text += "ENTRY %main {\n  %p = f32[8] parameter(0)\n  ROOT %r = f32[8] map(%p), dimensions={0}, to_apply=" +
              c(chain - 1) + "\n}\n";
      return text;
    }
  }
  return text;
}

// The module of the hostile-input report: c0 negates, cI calls c{I-1}, and
// the entry calls c{depth-1} (depth + 1 levels).
inline std::string CallChainModule(int depth) { return NestedModule(Nesting::kCall, depth + 1); }

// The parser's error for CallChainModule(depth) with depth >= limit: the
// chain crosses the limit where c{limit} calls c{limit-1}.
inline std::string CallChainTooDeepMessage(int limit) {
  return "calling %c" + std::to_string(limit - 1) + " here nests computations " + std::to_string(limit + 1) +
         " deep (%c" + std::to_string(limit) + " down to %c0); calls may nest at most " + std::to_string(limit) +
         " computations deep";
}

// c0 negates; each cK calls c{K-1} `fan` times in sequence; the entry calls
// the top once. Walking every call path costs fan^levels.
inline std::string FanOutCallModule(int levels, int fan) {
  std::string text = "HloModule fan_out\n\n%c0 {\n  %p = f32[8] parameter(0)\n  ROOT %r = f32[8] negate(%p)\n}\n\n";
  for (int k = 1; k < levels - 1; ++k) {
    text += "%c" + std::to_string(k) + " {\n  %p = f32[8] parameter(0)\n";
    std::string previous = "%p";
    for (int i = 0; i < fan; ++i) {
      const std::string name = "%r" + std::to_string(i);
      text += std::string(i + 1 == fan ? "  ROOT " : "  ") + name + " = f32[8] call(" + previous +
              "), to_apply=%c" + std::to_string(k - 1) + "\n";
      previous = name;
    }
    text += "}\n\n";
  }
  text += "ENTRY %main {\n  %p = f32[8] parameter(0)\n  ROOT %r = f32[8] call(%p), to_apply=%c" +
          std::to_string(levels - 2) + "\n}\n";
  return text;
}

// An entry of `n` instructions after its parameter, each using the one
// before: "%x5 = f32[8] negate(%x4)". `op` is a one-operand opcode of
// f32[8] (negate, opt-barrier, copy, ...).
inline std::string OperandChainModule(int64_t n, std::string_view op = "negate") {
  std::string text = "HloModule operand_chain\n\nENTRY %main {\n  %x0 = f32[8] parameter(0)\n";
  text.reserve(static_cast<size_t>(n) * 40);
  for (int64_t i = 1; i <= n; ++i) {
    text += std::string(i == n ? "  ROOT %x" : "  %x") + std::to_string(i) + " = f32[8] " + std::string(op) +
            "(%x" + std::to_string(i - 1) + ")\n";
  }
  return text + "}\n";
}

// A chain of `n` tokens, each after-all the one before.
inline std::string AfterAllChainModule(int64_t n) {
  std::string text = "HloModule token_chain\n\nENTRY %main {\n  %t0 = token[] after-all()\n";
  for (int64_t i = 1; i <= n; ++i) {
    text += std::string(i == n ? "  ROOT %t" : "  %t") + std::to_string(i) + " = token[] after-all(%t" +
            std::to_string(i - 1) + ")\n";
  }
  return text + "}\n";
}

// A value passed through `n` tuple/get-tuple-element pairs, then negated.
inline std::string TupleElementChainModule(int64_t n) {
  std::string text = "HloModule tuple_chain\n\nENTRY %main {\n  %g0 = f32[8] parameter(0)\n";
  for (int64_t i = 1; i <= n; ++i) {
    const std::string k = std::to_string(i);
    text += "  %t" + k + " = (f32[8]) tuple(%g" + std::to_string(i - 1) + ")\n  %g" + k +
            " = f32[8] get-tuple-element(%t" + k + "), index=0\n";
  }
  return text + "  ROOT %r = f32[8] negate(%g" + std::to_string(n) + ")\n}\n";
}

// `depth` tuples around `leaf`: NestedTuple(2, "f32[2]") is "((f32[2]))".
inline std::string NestedTuple(int depth, std::string_view leaf) {
  return std::string(static_cast<size_t>(depth), '(') + std::string(leaf) +
         std::string(static_cast<size_t>(depth), ')');
}

// Tuples of tuples with no shapes written, so the parser infers them:
// "%t5 = tuple(%t4)" with `copies` 1, "%t5 = tuple(%t4, %t4)" with 2. %t{n}
// nests n tuples deep and holds copies^n arrays.
inline std::string InferredTupleModule(int n, int copies) {
  std::string text = "HloModule inferred_tuples\n\nENTRY %main {\n  %t0 = f32[2] parameter(0)\n";
  for (int i = 1; i <= n; ++i) {
    std::string operands;
    for (int c = 0; c < copies; ++c) operands += (c == 0 ? "%t" : ", %t") + std::to_string(i - 1);
    text += std::string(i == n ? "  ROOT %t" : "  %t") + std::to_string(i) + " = tuple(" + operands + ")\n";
  }
  return text + "}\n";
}

// Runs `fn` on a new thread with a stack of `stack_bytes` and waits for it:
// a walk that needs more stack than that crashes the test.
inline void RunWithStack(size_t stack_bytes, const std::function<void()>& fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  auto trampoline = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  const int created = pthread_create(&thread, &attr, trampoline, const_cast<std::function<void()>*>(&fn));
  pthread_attr_destroy(&attr);
  if (created != 0) {
    fn();  // no thread: run here rather than skip the check
    return;
  }
  pthread_join(thread, nullptr);
}

// The stack the walks are checked on: the smallest a kiln thread gets by
// default is glibc's 2 MiB (std::thread, libuv and the worker pools when the
// stack limit is unlimited; 8 MiB otherwise). Checks run on half of that,
// and sanitizer builds, whose frames are several times larger, on all of it.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr size_t kCheckedStackBytes = size_t{2} << 20;
inline constexpr bool kSanitized = true;
#else
inline constexpr size_t kCheckedStackBytes = size_t{1} << 20;
inline constexpr bool kSanitized = false;
#endif

}  // namespace kiln::hlo::testing
