// Program: the in-memory form of a kiln executable (schema/executable.fbs).
//
// The compiler's lowering builds a Program; SerializeProgram turns it into
// the executable bytes that the cache stores and the HTTP API returns;
// ParseProgram turns bytes back into a Program after checking them
// (executable_envelope.h, FlatBuffers verification, then the structural
// checks of VerifyProgram). Serialization is deterministic, so bytes
// round-trip exactly. Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace kiln::runtime {

// The largest executable kiln makes, stores or reads (envelope included):
// the compiler refuses a program whose bytes would pass it, and every
// reader (store, bundle, shared tier, HTTP) refuses a larger claim before
// allocating. The corpus's largest program is 9 MB (Mixtral 8x7B 2x8); an
// HLO module at the 256 MiB request limit makes about 560 MB.
inline constexpr uint64_t kMaxExecutableBytes = uint64_t{1} << 30;

// Version of the executable layout; executables of another version are
// rejected (and the cache never serves them).
inline constexpr uint32_t kExecutableFormatVersion = 1;

enum class BufferKind : uint8_t { kParameter = 0, kTemp = 1, kOutput = 2, kConstant = 3 };

struct ProgramBuffer {
  BufferKind kind = BufferKind::kTemp;
  std::string shape;  // HLO text of an array shape
  uint64_t size_bytes = 0;
  uint64_t offset = 0;  // HBM placement from buffer assignment
  int32_t parameter_number = -1;
  std::vector<int64_t> parameter_path;  // index path inside a tuple parameter
  std::string literal;  // kConstant: HLO literal text
  bool operator==(const ProgramBuffer&) const = default;
};

struct ProgramTiling {
  std::vector<std::vector<int64_t>> operand_blocks;
  std::vector<std::vector<int64_t>> result_blocks;
  std::vector<int64_t> grid;
  uint64_t vmem_bytes = 0;
  bool operator==(const ProgramTiling&) const = default;
};

struct ProgramKernel {
  std::string name;
  std::string kind;  // loop, input, output, multi-output, single, given, horizontal, control
  // Self-contained HLO module: one entry parameter per input buffer; the
  // root is the one output array, or a flat tuple of the output arrays.
  std::string hlo;
  std::vector<uint32_t> inputs;   // buffer indices
  std::vector<uint32_t> outputs;  // buffer indices
  ProgramTiling tiling;
  uint32_t fused_instructions = 0;
  double flops = 0;
  double bytes_accessed = 0;
  double estimated_seconds = 0;
  bool operator==(const ProgramKernel&) const = default;
};

struct Program {
  uint32_t format_version = kExecutableFormatVersion;
  std::string key;
  std::string chip;
  std::string plan;
  std::string options;  // canonical JSON
  std::vector<ProgramBuffer> buffers;
  std::vector<ProgramKernel> kernels;  // execution order
  // Buffer of every array of every entry parameter (parameter 0's arrays in
  // depth-first order, then parameter 1's, ...).
  std::vector<uint32_t> parameters;
  // The result's shape (HLO text) and the buffer of each of its arrays in
  // depth-first order; a buffer may appear more than once.
  std::string result_shape;
  std::vector<uint32_t> results;
  uint64_t peak_hbm_bytes = 0;
  double estimated_seconds = 0;
  double compile_ms = 0;
  // The slice the program runs on, one copy per chip ("2x4"); empty: one
  // chip. Its chips are replica_count replicas of (chips / replica_count)
  // partitions each.
  std::string topology;
  uint32_t replica_count = 1;
  // For a program partitioned from a module with global shapes and
  // shardings: each entry parameter's global shape and sharding (HLO text)
  // and the result's. A run splits global arguments and assembles the
  // global result by them. Empty otherwise: arguments are each chip's own.
  std::vector<std::string> global_parameter_shapes;
  std::vector<std::string> parameter_shardings;
  std::string global_result_shape;
  std::string result_sharding;
  bool operator==(const Program&) const = default;
};

// Structural checks a Program must pass before it runs: buffer indices in
// range, parameter buffers listed once each, every kernel input written
// before it is read, each buffer written at most once, results defined.
// The error names the kernel or buffer at fault.
Status VerifyProgram(const Program& program);

// Most chips a program's topology may name (a TPU7x pod: 9,216).
inline constexpr int64_t kMaxProgramChips = 16384;

// The chips the program runs on: 1 without a topology, else the product of
// its axes. Errors (data loss) for a malformed topology or replica count.
Result<int64_t> ProgramChipCount(const Program& program);

// Executable bytes (envelope + FlatBuffer) for `program`. Fails
// (kResourceExhausted, reason program_too_large) for a program whose bytes
// would pass kMaxExecutableBytes, before building any that FlatBuffers
// could not hold: no executable kiln makes is one its readers refuse.
Result<std::vector<uint8_t>> SerializeProgram(const Program& program);

// Checks and decodes executable bytes; never trusts them. Errors say what is
// wrong ("executable truncated: header says 4096 payload bytes, 1200
// present", "executable checksum mismatch", "executable format version 2,
// this kiln reads 1", "kernel 3 reads buffer 17 before any kernel writes it").
Result<Program> ParseProgram(std::span<const uint8_t> bytes);

}  // namespace kiln::runtime
