#include "runtime/timing/collective_time.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "runtime/timing/ici_links.h"

namespace kiln::runtime::timing {
namespace {

using hlo::Opcode;

enum class Pattern : uint8_t { kGather, kScatter, kReduce, kAllToAll, kPermute, kBroadcast };

Pattern PatternOf(Opcode op) {
  switch (op) {
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart: return Pattern::kGather;
    case Opcode::kReduceScatter: return Pattern::kScatter;
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart: return Pattern::kReduce;
    case Opcode::kAllToAll:
    case Opcode::kRaggedAllToAll: return Pattern::kAllToAll;
    case Opcode::kCollectiveBroadcast: return Pattern::kBroadcast;
    default: return Pattern::kPermute;
  }
}

// The op's name without "-start": the collective an async pair performs.
std::string KindName(const hlo::Instruction& instr) {
  std::string name(hlo::OpcodeName(instr.opcode()));
  constexpr std::string_view kStart = "-start";
  if (name.ends_with(kStart)) name.resize(name.size() - kStart.size());
  return name;
}

double ArrayBytes(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    double total = 0;
    for (const hlo::Shape& s : shape.tuple_shapes()) total += ArrayBytes(s);
    return total;
  }
  return shape.IsArray() ? static_cast<double>(std::max<int64_t>(shape.ByteSize(), 0)) : 0;
}

// Bytes per participant as the op defines them: every operand of the
// variadic all-gather / all-reduce / reduce-scatter / all-to-all; the data
// operand (the first) of collective-permute and ragged-all-to-all, whose
// other operands are output buffers and offsets.
double PayloadBytes(const hlo::Instruction& instr) {
  const Opcode op = instr.opcode();
  const bool first_only = PatternOf(op) == Pattern::kPermute || op == Opcode::kRaggedAllToAll;
  double bytes = 0;
  for (int64_t i = 0; i < (first_only ? std::min<int64_t>(instr.operand_count(), 1) : instr.operand_count()); ++i) {
    bytes += ArrayBytes(instr.operand(i)->shape());
  }
  return bytes;
}

// One axis a sub-grid group covers: n chips, a ring when the axis wraps and
// the group spans all of it.
struct AxisSpan {
  int axis = 0;
  int64_t n = 1;
  bool ring = false;
};

// The axes of `group` when it is a whole sub-grid of the slice (a product of
// contiguous runs, one per axis); nullopt for strided or scattered groups.
std::optional<std::vector<AxisSpan>> SubGrid(const std::vector<int64_t>& group, const Topology& t) {
  std::vector<std::vector<int64_t>> positions(static_cast<size_t>(t.axes()));
  std::vector<int64_t> sorted = group;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return std::nullopt;
  for (int64_t device : group) {
    std::vector<int64_t> c = t.Coordinates(device);
    for (int a = 0; a < t.axes(); ++a) positions[a].push_back(c[a]);
  }
  std::vector<AxisSpan> spans;
  int64_t product = 1;
  for (int a = 0; a < t.axes(); ++a) {
    std::vector<int64_t>& p = positions[a];
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    const int64_t n = static_cast<int64_t>(p.size());
    product *= n;
    if (n == 1) continue;
    if (p.back() - p.front() + 1 != n) return std::nullopt;  // a gap: strided
    spans.push_back({a, n, t.wraps[a] && n == t.dims[a]});
  }
  if (product != static_cast<int64_t>(group.size())) return std::nullopt;
  return spans;
}

std::string AxisName(int axis) { return std::string(1, static_cast<char>('x' + axis)); }

std::string Describe(const std::vector<AxisSpan>& spans) {
  std::string out;
  for (const AxisSpan& s : spans) {
    if (!out.empty()) out += " + ";
    out += (s.ring ? "ring " : "line ") + AxisName(s.axis) + "(" + std::to_string(s.n) + ")";
  }
  return out;
}

// Busiest-link bytes and hops in sequence.
struct Traffic {
  double link_bytes = 0;
  int64_t hops = 0;
  std::string route;
};

// Shards on the busiest link of one axis's all-gather: (n-1)/2 each way
// round a ring, n-1 on a line's end links; and the hops the farthest shard
// takes.
double GatherShards(const AxisSpan& s) { return s.ring ? (s.n - 1) / 2.0 : static_cast<double>(s.n - 1); }
int64_t GatherHops(const AxisSpan& s) { return s.ring ? s.n / 2 : s.n - 1; }

// Chunks (1/n of a member's data) on the busiest link of one axis's
// all-to-all over shortest routes: round a ring, the pairs d < n/2 apart
// going one way and half of those exactly n/2 apart; on a line, the pairs
// either side of the middle link.
double AllToAllChunks(const AxisSpan& s) {
  double chunks = 0;
  if (s.ring) {
    for (int64_t d = 1; d < s.n; ++d) {
      if (d < s.n - d) chunks += static_cast<double>(d);
      if (d == s.n - d) chunks += d / 2.0;
    }
    return chunks;
  }
  for (int64_t k = 0; k + 1 < s.n; ++k) chunks = std::max(chunks, static_cast<double>((k + 1) * (s.n - 1 - k)));
  return chunks;
}

// The axis-by-axis schedule: the data splits into one part per axis; in
// phase j part i works on axis (i + j) mod k, so every axis is busy in
// every phase. `load(span, part_bytes_in, phase)` is the busiest link's
// bytes for one part on one axis; `grow` says whether a part's data grows
// by the axis length after each phase (all-gather) or stays (all-to-all).
template <typename Load>
Traffic AxisByAxis(const std::vector<AxisSpan>& spans, double bytes, bool grow, Load load,
                   int64_t (*hops)(const AxisSpan&)) {
  Traffic t;
  const size_t k = spans.size();
  std::vector<double> part(k, bytes / static_cast<double>(k));
  for (size_t j = 0; j < k; ++j) {
    double phase = 0;
    for (size_t i = 0; i < k; ++i) {
      const AxisSpan& s = spans[(i + j) % k];
      phase = std::max(phase, load(s, part[i]));
      if (grow) part[i] *= static_cast<double>(s.n);
    }
    t.link_bytes += phase;
  }
  for (const AxisSpan& s : spans) t.hops += hops(s);
  t.route = Describe(spans);
  return t;
}

// All-gather of `shard` bytes per member over a sub-grid group.
Traffic GridGather(const std::vector<AxisSpan>& spans, double shard) {
  return AxisByAxis(
      spans, shard, /*grow=*/true, [](const AxisSpan& s, double in) { return GatherShards(s) * in; }, GatherHops);
}

Traffic GridAllToAll(const std::vector<AxisSpan>& spans, double bytes) {
  return AxisByAxis(
      spans, bytes, /*grow=*/false,
      [](const AxisSpan& s, double in) { return AllToAllChunks(s) * in / static_cast<double>(s.n); },
      [](const AxisSpan& s) { return s.ring ? s.n / 2 : s.n - 1; });
}

// A pipelined broadcast from one member: every link of the tree carries the
// data once; round a ring, half goes each way.
Traffic GridBroadcast(const std::vector<AxisSpan>& spans, double bytes) {
  return AxisByAxis(
      spans, bytes, /*grow=*/false, [](const AxisSpan& s, double in) { return s.ring ? in / 2 : in; },
      [](const AxisSpan& s) { return s.ring ? s.n / 2 : s.n - 1; });
}

// Routed fallbacks, for groups that are not sub-grids and for permutes.
// A ring in the order each group lists its members, `bytes_per_hop(m)`
// over each of its hops; m - 1 steps, each as long as its longest hop.
template <typename BytesPerHop>
Traffic RoutedRing(const std::vector<std::vector<int64_t>>& groups, const Topology& topology, BytesPerHop bytes_per_hop) {
  LinkLoads loads(topology);
  Traffic t;
  int64_t longest_hop = 0, members = 0;
  for (const std::vector<int64_t>& g : groups) {
    const size_t m = g.size();
    if (m < 2) continue;
    members = std::max<int64_t>(members, static_cast<int64_t>(m));
    for (size_t i = 0; i < m; ++i) {
      longest_hop = std::max(longest_hop, loads.Route(g[i], g[(i + 1) % m], bytes_per_hop(m)));
    }
  }
  t.link_bytes = loads.Max();
  t.hops = (members - 1) * longest_hop;
  t.route = "ring of " + std::to_string(members) + " (routed)";
  return t;
}

constexpr int64_t kMaxRoutedPairs = int64_t{1} << 22;

Result<Traffic> RoutedAllToAll(const hlo::Instruction& instr, const std::vector<std::vector<int64_t>>& groups,
                               const Topology& topology, double bytes) {
  int64_t pairs = 0;
  for (const auto& g : groups) pairs += static_cast<int64_t>(g.size() * g.size());
  if (pairs > kMaxRoutedPairs) {
    return ResourceExhaustedError("instruction %" + std::string(instr.name()) + ": " + std::to_string(pairs) +
                                  " all-to-all pairs of scattered devices are too many to route");
  }
  LinkLoads loads(topology);
  Traffic t;
  for (const auto& g : groups) {
    const double chunk = bytes / static_cast<double>(g.size());
    for (int64_t a : g) {
      for (int64_t b : g) t.hops = std::max(t.hops, loads.Route(a, b, chunk));
    }
  }
  t.link_bytes = loads.Max();
  t.route = "pairs (routed)";
  return t;
}

Traffic RoutedPermute(const std::vector<std::pair<int64_t, int64_t>>& pairs, const Topology& topology, double bytes) {
  LinkLoads loads(topology);
  Traffic t;
  for (const auto& [source, target] : pairs) t.hops = std::max(t.hops, loads.Route(source, target, bytes));
  t.link_bytes = loads.Max();
  t.route = std::to_string(pairs.size()) + " pairs, " + std::to_string(t.hops) + " hops";
  return t;
}

// The sub-grids of every group, or nullopt when any group is not one.
std::optional<std::vector<std::vector<AxisSpan>>> SubGrids(const std::vector<std::vector<int64_t>>& groups,
                                                           const Topology& topology) {
  std::vector<std::vector<AxisSpan>> out;
  for (const std::vector<int64_t>& g : groups) {
    if (g.size() < 2) continue;
    std::optional<std::vector<AxisSpan>> spans = SubGrid(g, topology);
    if (!spans) return std::nullopt;
    out.push_back(std::move(*spans));
  }
  return out;
}

// The traffic of a group collective: disjoint sub-grids share no link, so
// the slowest group sets the time; otherwise every group's routed ring.
Result<Traffic> GroupTraffic(const hlo::Instruction& instr, Pattern pattern,
                             const std::vector<std::vector<int64_t>>& groups, int64_t members,
                             const Topology& topology, double payload) {
  const double m = static_cast<double>(members);
  // Bytes entering the all-gather phases: the input shard, or for a
  // reduce-scatter (the mirror image of an all-gather) its output shard.
  const double shard = pattern == Pattern::kGather ? payload : payload / m;
  if (std::optional<std::vector<std::vector<AxisSpan>>> grids = SubGrids(groups, topology)) {
    Traffic worst;
    for (const std::vector<AxisSpan>& spans : *grids) {
      Traffic t;
      switch (pattern) {
        case Pattern::kGather:
        case Pattern::kScatter:
        case Pattern::kReduce: t = GridGather(spans, shard); break;
        case Pattern::kAllToAll: t = GridAllToAll(spans, payload); break;
        case Pattern::kBroadcast: t = GridBroadcast(spans, payload); break;
        case Pattern::kPermute: break;
      }
      if (t.link_bytes + static_cast<double>(t.hops) >= worst.link_bytes + static_cast<double>(worst.hops)) {
        worst = std::move(t);
      }
    }
    return worst;
  }
  switch (pattern) {
    case Pattern::kAllToAll: return RoutedAllToAll(instr, groups, topology, payload);
    case Pattern::kBroadcast:
      return RoutedRing(groups, topology, [&](size_t) { return payload; });
    default:
      return RoutedRing(groups, topology, [&](size_t size) { return static_cast<double>(size - 1) * shard; });
  }
}

}  // namespace

bool IsTimedCollective(Opcode op) {
  switch (op) {
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kRaggedAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectiveBroadcast:
      return true;
    default:
      return false;
  }
}

Result<CollectiveTime> TimeCollective(const hlo::Instruction& collective, const Topology& topology,
                                      const ChipSpec& chip, const SliceAssignment& assignment) {
  if (!IsTimedCollective(collective.opcode())) {
    return InvalidArgumentError("instruction %" + std::string(collective.name()) + ": " +
                                std::string(hlo::OpcodeName(collective.opcode())) +
                                " is not a timed collective");
  }
  const Pattern pattern = PatternOf(collective.opcode());
  CollectiveTime time;
  time.kind = KindName(collective);
  time.payload_bytes = PayloadBytes(collective);
  Traffic traffic;
  if (pattern == Pattern::kPermute) {
    KILN_ASSIGN_OR_RETURN(auto pairs, PermutePairs(collective, topology.chips(), assignment));
    std::erase_if(pairs, [](const auto& p) { return p.first == p.second; });
    time.groups = static_cast<int64_t>(pairs.size());
    time.participants = pairs.empty() ? 1 : 2;
    time.ici_bytes = pairs.empty() ? 0 : time.payload_bytes;
    traffic = RoutedPermute(pairs, topology, time.payload_bytes);
  } else {
    KILN_ASSIGN_OR_RETURN(auto groups, ParticipantGroups(collective, topology.chips(), assignment));
    time.groups = static_cast<int64_t>(groups.size());
    for (const auto& g : groups) time.participants = std::max<int64_t>(time.participants, static_cast<int64_t>(g.size()));
    const double m = static_cast<double>(time.participants);
    if (time.participants < 2) {
      time.route = "one participant";
      return time;
    }
    KILN_ASSIGN_OR_RETURN(traffic, GroupTraffic(collective, pattern, groups, time.participants, topology,
                                                time.payload_bytes));
    switch (pattern) {
      case Pattern::kGather: time.ici_bytes = (m - 1) * time.payload_bytes; break;
      case Pattern::kScatter:
      case Pattern::kAllToAll: time.ici_bytes = (m - 1) / m * time.payload_bytes; break;
      case Pattern::kReduce: time.ici_bytes = 2 * (m - 1) / m * time.payload_bytes; break;
      case Pattern::kBroadcast: time.ici_bytes = time.payload_bytes; break;
      case Pattern::kPermute: break;
    }
    if (pattern == Pattern::kReduce) {  // a reduce-scatter, then an all-gather
      traffic.link_bytes *= 2;
      traffic.hops *= 2;
    }
  }
  time.route = std::move(traffic.route);
  time.link_bytes = traffic.link_bytes;
  time.transfer_seconds = traffic.link_bytes / chip.ici_bytes_per_s;
  time.latency_seconds = static_cast<double>(traffic.hops) * chip.ici_hop_latency_s;
  time.seconds = time.transfer_seconds + time.latency_seconds;
  return time;
}

}  // namespace kiln::runtime::timing
