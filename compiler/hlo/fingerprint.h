// The canonical fingerprint: a 128-bit key (XXH3-128) over graph-plus-shape.
//
// The key depends on everything that changes the compiled program: opcodes,
// shapes with element types and layouts, semantic attributes, constants,
// operand order, called computations, the module configuration (entry
// layout, aliasing, replica/partition counts, ...), the target chip, the
// compile options and kCompilerFormatVersion (base/version.h). It does not
// depend on names of instructions or computations, metadata, statistics,
// whitespace, comments, attribute order, the textual order of independent
// instructions, or the numbers of channel ids. Each instruction is hashed from its own
// content and its operands' hashes (a Merkle DAG); a computation from its
// parameters, root and side-effecting leaves; the module from its entry.
//
// Per-component sub-hashes come with the key so a miss can be explained.
// Thread-safe (reads the module only).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/version.h"
#include "compiler/hlo/module.h"

namespace kiln::hlo {

struct Hash128 {
  uint64_t high = 0;
  uint64_t low = 0;
  bool operator==(const Hash128&) const = default;
  auto operator<=>(const Hash128&) const = default;
  std::string Hex() const;  // 32 lowercase hex digits
};

struct FingerprintOptions {
  std::string chip = "v5e";
  // Compile options in a canonical text form (sorted key=value pairs);
  // produced by the compiler, opaque here.
  std::string compile_options;
};

struct CalledComputationHash {
  std::string name;  // for explanations only; not part of any hash
  Hash128 hash;
};

struct Fingerprint {
  Hash128 key;
  uint32_t format_version = kCompilerFormatVersion;
  std::vector<Hash128> parameter_shapes;  // entry parameter i's shape
  std::vector<std::string> parameter_shape_text;
  Hash128 entry_body;
  std::vector<CalledComputationHash> called_computations;  // reachable from entry
  Hash128 module_config;
  Hash128 options;
  Hash128 target;
};

// Fails only on a module the verifier would reject structurally (no entry,
// a computation without a root).
Result<Fingerprint> FingerprintModule(const Module& module, const FingerprintOptions& options);

// The fingerprint of the same module under other options: the options and
// target hashes and the key are recomputed from `options`, the module's
// hashes are kept (so a module changed since is not re-read).
Fingerprint FingerprintWithOptions(Fingerprint fingerprint, const FingerprintOptions& options);

}  // namespace kiln::hlo
