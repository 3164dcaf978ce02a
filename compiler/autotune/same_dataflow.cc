#include "compiler/autotune/same_dataflow.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/format/program.h"

namespace kiln::autotune {
namespace {

// A symbolic value. Ids [0, total kernel outputs) are kernel outputs, the
// reference's kernel k output j being DataflowOutputs::base[k] + j; ids past
// them are parameters and constants (DataflowSources). Negative: none.
using DataflowValue = int64_t;
constexpr DataflowValue kDataflowUndefined = -1;

// Opcodes whose effects are ordered: a kernel holding one keeps its place
// among the others. Their -start/-done forms count too.
constexpr std::string_view kDataflowOrderedOpcodes[] = {
    "all-reduce",          "all-gather", "reduce-scatter", "all-to-all", "ragged-all-to-all",
    "collective-permute",  "collective-broadcast", "send", "recv", "infeed", "outfeed", "rng",
    "rng-bit-generator", "rng-get-and-update-state", "custom-call",
};

// Whether an instruction line's attributes mark it as having a side effect
// (a custom-call is ordered only then, as passes/side_effects.h has it).
bool DataflowMarkedSideEffect(std::string_view line) {
  return line.find("custom_call_has_side_effect=true") != std::string_view::npos;
}

// The ordered opcode of one instruction line of HLO text
// ("[ROOT ]name = shape opcode(operands), attributes"), or empty. The opcode
// is the token after the shape, so names, operands and attribute text
// (metadata strings, computation names) never count.
std::string_view DataflowLineOrderedOpcode(std::string_view line) {
  const size_t eq = line.find(" = ");
  if (eq == std::string_view::npos) return {};
  size_t i = eq + 3;
  while (i < line.size() && line[i] == ' ') ++i;
  int depth = 0;  // a tuple shape has spaces inside its parentheses
  for (; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (--depth < 0) return {};
    } else if (c == ' ' && depth == 0) {
      break;
    }
  }
  while (i < line.size() && line[i] == ' ') ++i;
  const size_t start = i;
  while (i < line.size() && ((line[i] >= 'a' && line[i] <= 'z') || (line[i] >= '0' && line[i] <= '9') ||
                             line[i] == '-' || line[i] == '_')) {
    ++i;
  }
  if (i == start || i >= line.size() || line[i] != '(') return {};
  const std::string_view opcode = line.substr(start, i - start);
  std::string_view base = opcode;
  for (std::string_view suffix : {std::string_view("-start"), std::string_view("-done")}) {
    if (base.size() > suffix.size() && base.ends_with(suffix)) base.remove_suffix(suffix.size());
  }
  if (base == "custom-call") return DataflowMarkedSideEffect(line.substr(i)) ? opcode : std::string_view();
  for (std::string_view ordered : kDataflowOrderedOpcodes) {
    if (base == ordered) return opcode;
  }
  return {};
}

// The first ordered opcode in a kernel's HLO text, or empty.
std::string_view DataflowOrderedOpcode(std::string_view hlo) {
  size_t start = 0;
  while (start < hlo.size()) {
    size_t end = hlo.find('\n', start);
    if (end == std::string_view::npos) end = hlo.size();
    const std::string_view opcode = DataflowLineOrderedOpcode(hlo.substr(start, end - start));
    if (!opcode.empty()) return opcode;
    start = end + 1;
  }
  return {};
}

std::string DataflowKernelLabel(const runtime::Program& p, size_t k) {
  return "kernel " + std::to_string(k) + " (" + p.kernels[k].name + ")";
}

std::string DataflowPathText(const std::vector<int64_t>& path) {
  std::string out = "{";
  for (size_t i = 0; i < path.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(path[i]);
  }
  return out + "}";
}

std::string DataflowParameterText(const runtime::ProgramBuffer& b) {
  std::string out = "parameter ";
  out += std::to_string(b.parameter_number);
  if (!b.parameter_path.empty()) {
    out += ' ';
    out += DataflowPathText(b.parameter_path);
  }
  return out;
}

std::string DataflowShortText(std::string_view text) {
  constexpr size_t kDataflowShortTextChars = 60;
  if (text.size() <= kDataflowShortTextChars) return std::string(text);
  return std::string(text.substr(0, kDataflowShortTextChars)) + "...";
}

// Where the reference's kernel outputs live in value ids.
struct DataflowOutputs {
  std::vector<DataflowValue> base;  // per reference kernel; one past the last at the end
  std::vector<std::string_view> names;
};

// Parameters and constants, interned across both programs.
class DataflowSources {
 public:
  explicit DataflowSources(DataflowValue first) : first_(first) {}

  DataflowValue Intern(std::string key, std::string description) {
    auto [it, inserted] = ids_.try_emplace(std::move(key), first_ + static_cast<DataflowValue>(descriptions_.size()));
    if (inserted) descriptions_.push_back(std::move(description));
    return it->second;
  }

  DataflowValue first() const { return first_; }
  const std::string& Description(DataflowValue v) const { return descriptions_[static_cast<size_t>(v - first_)]; }

 private:
  DataflowValue first_;
  std::unordered_map<std::string, DataflowValue> ids_;
  std::vector<std::string> descriptions_;
};

std::string DataflowDescribe(DataflowValue v, const DataflowOutputs& outputs, const DataflowSources& sources) {
  if (v < 0) return "nothing";
  if (v >= sources.first()) return sources.Description(v);
  const auto after = std::upper_bound(outputs.base.begin(), outputs.base.end(), v);
  const size_t k = static_cast<size_t>(after - outputs.base.begin()) - 1;
  return "output " + std::to_string(v - outputs.base[k]) + " of kernel " + std::string(outputs.names[k]);
}

// The latest write over HBM byte ranges: a segment tree over the elementary
// intervals between buffer boundaries, with a range "write at time t" (times
// only grow) and a range "latest write" query, both O(log buffers).
class DataflowOverlapTree {
 public:
  explicit DataflowOverlapTree(size_t segments) : segments_(segments), tag_(4 * segments + 4, 0), max_(tag_) {}

  void Write(size_t lo, size_t hi, uint64_t time) {
    if (lo < hi) Write(1, 0, segments_, lo, hi, time);
  }
  uint64_t Latest(size_t lo, size_t hi) const { return lo < hi ? Latest(1, 0, segments_, lo, hi) : 0; }

 private:
  void Write(size_t node, size_t l, size_t r, size_t lo, size_t hi, uint64_t time) {
    max_[node] = std::max(max_[node], time);
    if (lo <= l && r <= hi) {
      tag_[node] = std::max(tag_[node], time);
      return;
    }
    const size_t mid = l + (r - l) / 2;
    if (lo < mid) Write(2 * node, l, mid, lo, hi, time);
    if (hi > mid) Write(2 * node + 1, mid, r, lo, hi, time);
  }
  uint64_t Latest(size_t node, size_t l, size_t r, size_t lo, size_t hi) const {
    if (lo <= l && r <= hi) return max_[node];
    const size_t mid = l + (r - l) / 2;
    uint64_t latest = tag_[node];  // covers all of [l, r), which meets [lo, hi)
    if (lo < mid) latest = std::max(latest, Latest(2 * node, l, mid, lo, hi));
    if (hi > mid) latest = std::max(latest, Latest(2 * node + 1, mid, r, lo, hi));
    return latest;
  }

  size_t segments_;
  std::vector<uint64_t> tag_;  // a write to the whole node's range
  std::vector<uint64_t> max_;  // the latest write anywhere in the node's range
};

// Symbolic execution of one program. Buffer b holds value_[b], defined by
// write number defined_at_[b] (0: before the first kernel); it is
// unreadable once a later write meets its bytes.
class DataflowWalk {
 public:
  // `memory`: whether writes clobber the temporaries they overlap.
  DataflowWalk(const runtime::Program& p, DataflowSources& sources, bool memory) : p_(p), memory_(memory) {
    const size_t n = p.buffers.size();
    value_.assign(n, kDataflowUndefined);
    defined_at_.assign(n, 0);
    std::vector<uint64_t> bounds;
    bounds.reserve(2 * n);
    for (const runtime::ProgramBuffer& b : p.buffers) {
      if (!memory_ || !SharesMemory(b)) continue;
      bounds.push_back(b.offset);
      bounds.push_back(End(b));
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    lo_.assign(n, 0);
    hi_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const runtime::ProgramBuffer& b = p.buffers[i];
      if (!memory_ || !SharesMemory(b)) continue;  // overlaps nothing
      lo_[i] = static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), b.offset) - bounds.begin());
      hi_[i] = static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), End(b)) - bounds.begin());
    }
    tree_ = DataflowOverlapTree(bounds.empty() ? 0 : bounds.size() - 1);
    writer_.push_back(0);  // write 0: the program's inputs
    written_.push_back(0);
    for (size_t i = 0; i < n; ++i) {
      const runtime::ProgramBuffer& b = p.buffers[i];
      if (b.kind == runtime::BufferKind::kParameter) {
        std::string key = "p";
        key += std::to_string(b.parameter_number);
        key += DataflowPathText(b.parameter_path);
        value_[i] = sources.Intern(std::move(key), DataflowParameterText(b));
      } else if (b.kind == runtime::BufferKind::kConstant) {
        value_[i] = sources.Intern("c" + b.shape + '\0' + b.literal,
                                   "constant " + DataflowShortText(b.shape + " " + b.literal));
      }
    }
  }

  // The value buffer `b` holds for `reader` (the text before " reads ...").
  Result<DataflowValue> Read(uint32_t b, const std::string& reader) const {
    if (b >= value_.size()) {
      return FailedPreconditionError(reader + " reads buffer " + std::to_string(b) + " of " +
                                     std::to_string(value_.size()));
    }
    if (value_[b] == kDataflowUndefined) {
      return FailedPreconditionError(reader + " reads buffer " + std::to_string(b) + " before anything wrote it");
    }
    const uint64_t latest = tree_.Latest(lo_[b], hi_[b]);
    if (latest > defined_at_[b]) {
      return FailedPreconditionError(reader + " reads buffer " + std::to_string(b) + " " + Range(b) + " after " +
                                     DataflowKernelLabel(p_, writer_[latest]) + " overwrote its memory (buffer " +
                                     std::to_string(written_[latest]) + " " + Range(written_[latest]) + ")");
    }
    return value_[b];
  }

  // Kernel k writes `v` to buffer b.
  Status Write(size_t k, uint32_t b, DataflowValue v) {
    if (b >= value_.size()) {
      return FailedPreconditionError(DataflowKernelLabel(p_, k) + " writes buffer " + std::to_string(b) + " of " +
                                     std::to_string(value_.size()));
    }
    const uint64_t time = writer_.size();
    writer_.push_back(k);
    written_.push_back(b);
    value_[b] = v;
    defined_at_[b] = time;
    tree_.Write(lo_[b], hi_[b], time);
    return Ok();
  }

 private:
  // "[offset, end)" of buffer `b`, for messages.
  std::string Range(uint32_t b) const {
    const runtime::ProgramBuffer& buffer = p_.buffers[b];
    return "[" + std::to_string(buffer.offset) + ", " + std::to_string(End(buffer)) + ")";
  }
  // Whether `b` lies in the temporaries area, where buffer assignment reuses
  // memory (kernel results; offsets count from the area's start).
  // Parameters and constants have memory of their own, never reused, and
  // empty buffers overlap nothing.
  static bool SharesMemory(const runtime::ProgramBuffer& b) {
    return b.size_bytes > 0 && (b.kind == runtime::BufferKind::kTemp || b.kind == runtime::BufferKind::kOutput);
  }
  static uint64_t End(const runtime::ProgramBuffer& b) {
    return b.offset > std::numeric_limits<uint64_t>::max() - b.size_bytes ? std::numeric_limits<uint64_t>::max()
                                                                          : b.offset + b.size_bytes;
  }

  const runtime::Program& p_;
  bool memory_ = true;
  std::vector<DataflowValue> value_;
  std::vector<uint64_t> defined_at_;
  std::vector<size_t> lo_, hi_;  // the buffer's elementary intervals
  DataflowOverlapTree tree_{0};
  std::vector<size_t> writer_;    // kernel of each write number
  std::vector<uint32_t> written_;  // buffer of each write number
};

struct DataflowKernelKey {
  std::string_view name;
  std::string_view hlo;
  bool operator==(const DataflowKernelKey&) const = default;
};

struct DataflowKernelKeyHash {
  size_t operator()(const DataflowKernelKey& k) const {
    const size_t h = std::hash<std::string_view>()(k.name);
    return h ^ (std::hash<std::string_view>()(k.hlo) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  }
};

Error DataflowDiffers(const std::string& what) {
  return FailedPreconditionError("the candidate computes something else than the reference: " + what);
}

// Parameters, result shape and the program's slice.
Status DataflowSameSignature(const runtime::Program& a, const runtime::Program& b) {
  if (a.result_shape != b.result_shape) {
    return DataflowDiffers("its result shape is " + DataflowShortText(b.result_shape) + ", the reference's " +
                           DataflowShortText(a.result_shape));
  }
  if (a.results.size() != b.results.size()) {
    return DataflowDiffers(std::to_string(b.results.size()) + " result arrays, the reference has " +
                           std::to_string(a.results.size()));
  }
  if (a.topology != b.topology || a.replica_count != b.replica_count ||
      a.global_parameter_shapes != b.global_parameter_shapes || a.parameter_shardings != b.parameter_shardings ||
      a.global_result_shape != b.global_result_shape || a.result_sharding != b.result_sharding) {
    return DataflowDiffers("its slice, replicas or global signature differ");
  }
  if (a.parameters.size() != b.parameters.size()) {
    return DataflowDiffers(std::to_string(b.parameters.size()) + " parameter arrays, the reference has " +
                           std::to_string(a.parameters.size()));
  }
  for (size_t i = 0; i < a.parameters.size(); ++i) {
    if (a.parameters[i] >= a.buffers.size() || b.parameters[i] >= b.buffers.size()) {
      return DataflowDiffers("parameter array " + std::to_string(i) + " names no buffer");
    }
    const runtime::ProgramBuffer& x = a.buffers[a.parameters[i]];
    const runtime::ProgramBuffer& y = b.buffers[b.parameters[i]];
    if (x.parameter_number != y.parameter_number || x.parameter_path != y.parameter_path || x.shape != y.shape) {
      return DataflowDiffers("parameter array " + std::to_string(i) + " is " + DataflowParameterText(y) + " " +
                             y.shape + ", the reference's " + DataflowParameterText(x) + " " + x.shape);
    }
  }
  return Ok();
}

// match[c]: the reference kernel of candidate kernel c.
Result<std::vector<size_t>> DataflowMatchKernels(const runtime::Program& a, const runtime::Program& b) {
  struct Occurrences {
    std::vector<size_t> kernels;
    size_t used = 0;
  };
  std::unordered_map<DataflowKernelKey, Occurrences, DataflowKernelKeyHash> by_key;
  std::unordered_map<std::string_view, size_t> by_name;
  by_key.reserve(a.kernels.size());
  by_name.reserve(a.kernels.size());
  for (size_t k = 0; k < a.kernels.size(); ++k) {
    by_key[{a.kernels[k].name, a.kernels[k].hlo}].kernels.push_back(k);
    by_name.try_emplace(a.kernels[k].name, k);
  }
  std::vector<size_t> match(b.kernels.size());
  for (size_t c = 0; c < b.kernels.size(); ++c) {
    const runtime::ProgramKernel& y = b.kernels[c];
    auto it = by_key.find({y.name, y.hlo});
    if (it == by_key.end()) {
      if (by_name.contains(y.name)) {
        return DataflowDiffers(DataflowKernelLabel(b, c) + " has other HLO than the reference's " + y.name);
      }
      return DataflowDiffers(DataflowKernelLabel(b, c) + " is not among the reference's kernels");
    }
    Occurrences& o = it->second;
    if (o.used == o.kernels.size()) {
      return DataflowDiffers(DataflowKernelLabel(b, c) + " runs more often than the reference's " +
                             std::to_string(o.kernels.size()));
    }
    const size_t r = o.kernels[o.used++];
    const runtime::ProgramKernel& x = a.kernels[r];
    if (x.inputs.size() != y.inputs.size() || x.outputs.size() != y.outputs.size()) {
      return DataflowDiffers(DataflowKernelLabel(b, c) + " reads " + std::to_string(y.inputs.size()) +
                             " and writes " + std::to_string(y.outputs.size()) + " buffers, the reference's " +
                             std::to_string(x.inputs.size()) + " and " + std::to_string(x.outputs.size()));
    }
    match[c] = r;
  }
  for (size_t r = 0; r < a.kernels.size(); ++r) {
    const Occurrences& o = by_key.find({a.kernels[r].name, a.kernels[r].hlo})->second;
    if (o.used < o.kernels.size()) {
      return DataflowDiffers("it lacks the reference's " + DataflowKernelLabel(a, o.kernels[o.used]));
    }
  }
  return match;
}

}  // namespace

namespace {

// One comparison, memory overlaps modelled or not. `reference_broken` is
// set when the error is the reference's own.
Status CompareDataflow(const runtime::Program& a, const runtime::Program& b, const std::vector<size_t>& match,
                       bool memory, bool& reference_broken) {
  reference_broken = false;

  DataflowOutputs outputs;
  outputs.base.reserve(a.kernels.size() + 1);
  outputs.names.reserve(a.kernels.size());
  DataflowValue total = 0;
  for (const runtime::ProgramKernel& k : a.kernels) {
    outputs.base.push_back(total);
    outputs.names.push_back(k.name);
    total += static_cast<DataflowValue>(k.outputs.size());
  }
  outputs.base.push_back(total);
  DataflowSources sources(total);
  std::vector<std::string_view> ordered(a.kernels.size());
  for (size_t k = 0; k < a.kernels.size(); ++k) ordered[k] = DataflowOrderedOpcode(a.kernels[k].hlo);

  // The reference: the values each kernel reads, and the results.
  std::vector<DataflowValue> read;  // kernel k's at [read_begin[k], read_begin[k + 1])
  std::vector<size_t> read_begin;
  read_begin.reserve(a.kernels.size() + 1);
  std::vector<DataflowValue> reference_results;
  {
    auto broken = [&](const Error& e) {
      reference_broken = true;
      return FailedPreconditionError("the reference's dataflow is not well defined: " + e.message);
    };
    DataflowWalk walk(a, sources, memory);
    for (size_t k = 0; k < a.kernels.size(); ++k) {
      const runtime::ProgramKernel& kernel = a.kernels[k];
      read_begin.push_back(read.size());
      const std::string reader = DataflowKernelLabel(a, k);
      for (uint32_t in : kernel.inputs) {
        Result<DataflowValue> v = walk.Read(in, reader);
        if (!v) return broken(v.error());
        read.push_back(*v);
      }
      for (size_t j = 0; j < kernel.outputs.size(); ++j) {
        Status written = walk.Write(k, kernel.outputs[j], outputs.base[k] + static_cast<DataflowValue>(j));
        if (!written) return broken(written.error());
      }
    }
    read_begin.push_back(read.size());
    for (size_t i = 0; i < a.results.size(); ++i) {
      Result<DataflowValue> v = walk.Read(a.results[i], "result array " + std::to_string(i));
      if (!v) return broken(v.error());
      reference_results.push_back(*v);
    }
  }

  // The candidate, against it.
  DataflowWalk walk(b, sources, memory);
  size_t last_ordered = 0;  // candidate kernel of the latest ordered effect
  bool any_ordered = false;
  for (size_t c = 0; c < b.kernels.size(); ++c) {
    const runtime::ProgramKernel& kernel = b.kernels[c];
    const size_t r = match[c];
    if (!ordered[r].empty()) {
      if (any_ordered && match[last_ordered] > r) {
        return DataflowDiffers(DataflowKernelLabel(b, c) + " (" + std::string(ordered[r]) + ") runs after " +
                               DataflowKernelLabel(b, last_ordered) + " (" +
                               std::string(ordered[match[last_ordered]]) +
                               "), the reference runs it before: ordered effects changed order");
      }
      any_ordered = true;
      last_ordered = c;
    }
    const std::string reader = DataflowKernelLabel(b, c);
    for (size_t i = 0; i < kernel.inputs.size(); ++i) {
      Result<DataflowValue> v = walk.Read(kernel.inputs[i], reader);
      if (!v) return DataflowDiffers(v.error().message);
      const DataflowValue want = read[read_begin[r] + i];
      if (*v != want) {
        return DataflowDiffers(reader + " reads " + DataflowDescribe(*v, outputs, sources) + " as input " +
                               std::to_string(i) + ", the reference's kernel reads " +
                               DataflowDescribe(want, outputs, sources));
      }
    }
    for (size_t j = 0; j < kernel.outputs.size(); ++j) {
      Status written = walk.Write(c, kernel.outputs[j], outputs.base[r] + static_cast<DataflowValue>(j));
      if (!written) return DataflowDiffers(written.error().message);
    }
  }
  for (size_t i = 0; i < b.results.size(); ++i) {
    Result<DataflowValue> v = walk.Read(b.results[i], "result array " + std::to_string(i));
    if (!v) return DataflowDiffers(v.error().message);
    if (*v != reference_results[i]) {
      return DataflowDiffers("result array " + std::to_string(i) + " is " + DataflowDescribe(*v, outputs, sources) +
                             ", the reference's " + DataflowDescribe(reference_results[i], outputs, sources));
    }
  }
  return Ok();
}

}  // namespace

Result<DataflowCheck> SameDataflow(std::span<const uint8_t> reference, std::span<const uint8_t> candidate) {
  KILN_ASSIGN_OR_RETURN(runtime::Program a, runtime::ParseProgram(reference));
  KILN_ASSIGN_OR_RETURN(runtime::Program b, runtime::ParseProgram(candidate));
  KILN_RETURN_IF_ERROR(DataflowSameSignature(a, b));
  KILN_ASSIGN_OR_RETURN(std::vector<size_t> match, DataflowMatchKernels(a, b));
  DataflowCheck check;
  bool reference_broken = false;
  Status same = CompareDataflow(a, b, match, /*memory=*/true, reference_broken);
  if (!same && reference_broken) {
    // The reference's offsets do not describe its memory (an in-place
    // result takes over its operand's bytes at no offset of its own): the
    // values are compared buffer by buffer alone.
    check.memory_checked = false;
    check.memory_note = same.error().message;
    same = CompareDataflow(a, b, match, /*memory=*/false, reference_broken);
  }
  if (!same) return same.error();
  return check;
}

}  // namespace kiln::autotune
