#include "runtime/chip/topology.h"

#include <charconv>
#include <optional>

namespace kiln::runtime {
namespace {

// Longer than any pod axis; keeps the chip count's product far from overflow.
constexpr int64_t kMaxAxis = 1 << 16;

std::vector<bool> Wraparounds(const std::vector<int64_t>& dims, const ChipSpec& chip) {
  std::vector<bool> wraps(dims.size(), false);
  switch (chip.wraparound) {
    case IciWraparound::kFullAxis:
      for (size_t i = 0; i < dims.size(); ++i) wraps[i] = chip.pod_axis > 2 && dims[i] == chip.pod_axis;
      break;
    case IciWraparound::kWholeCubes: {
      bool cubes = true;
      for (int64_t d : dims) cubes = cubes && d % 4 == 0;
      for (size_t i = 0; i < dims.size(); ++i) wraps[i] = cubes;
      break;
    }
  }
  return wraps;
}

std::string_view Example(const ChipSpec& chip) { return chip.torus_dims == 3 ? "2x2x1" : "2x4"; }
std::string_view Form(const ChipSpec& chip) { return chip.torus_dims == 3 ? "AxBxC" : "AxB"; }

}  // namespace

int64_t Topology::chips() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string Topology::ToString() const {
  std::string out;
  for (int64_t d : dims) {
    if (!out.empty()) out += 'x';
    out += std::to_string(d);
  }
  return out;
}

std::vector<int64_t> Topology::Coordinates(int64_t device) const {
  std::vector<int64_t> coords(dims.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    coords[i] = device % dims[i];
    device /= dims[i];
  }
  return coords;
}

int64_t Topology::DeviceAt(std::span<const int64_t> coords) const {
  int64_t device = 0;
  for (size_t i = dims.size(); i-- > 0;) device = device * dims[i] + coords[i];
  return device;
}

Topology SingleChip(const ChipSpec& chip) {
  Topology t;
  t.dims.assign(static_cast<size_t>(chip.torus_dims), 1);
  t.wraps.assign(t.dims.size(), false);
  return t;
}

Result<Topology> ParseTopology(std::string_view text, const ChipSpec& chip) {
  auto bad = [&](const std::string& why) {
    return InvalidArgumentError("bad topology '" + std::string(text) + "' for " + std::string(chip.name) + ": " +
                                why);
  };
  Topology t;
  std::string_view rest = text;
  while (true) {
    size_t x = rest.find('x');
    std::string_view field = rest.substr(0, x);
    int64_t value = 0;
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (field.empty() || ec != std::errc() || end != field.data() + field.size()) {
      std::string why = "'";
      why.append(field).append("' is not a chip count (expected ").append(Form(chip));
      return bad(why.append(", e.g. ").append(Example(chip)).append(")"));
    }
    if (value <= 0) return bad("axis " + std::to_string(t.dims.size()) + " must hold at least one chip");
    if (value > kMaxAxis) return bad("axis " + std::to_string(t.dims.size()) + " is longer than any pod");
    t.dims.push_back(value);
    if (t.dims.size() > 3) return bad("more than 3 axes");
    if (x == std::string_view::npos) break;
    rest.remove_prefix(x + 1);
  }
  if (t.axes() != chip.torus_dims) {
    std::string why(chip.name);
    why.append(" slices are ").append(std::to_string(chip.torus_dims)).append("D (").append(Form(chip));
    why.append(", e.g. ").append(Example(chip)).append("), not ").append(std::to_string(t.axes())).append("D");
    return bad(why);
  }
  for (int i = 0; i < t.axes(); ++i) {
    if (chip.pod_axis > 0 && t.dims[i] > chip.pod_axis) {
      return bad("axis " + std::to_string(i) + " has " + std::to_string(t.dims[i]) + " chips; a " +
                 std::string(chip.name) + " pod is at most " + std::to_string(chip.pod_axis) + " wide");
    }
  }
  if (t.chips() > chip.pod_chips) {
    return bad(std::to_string(t.chips()) + " chips; a " + std::string(chip.name) + " pod holds " +
               std::to_string(chip.pod_chips));
  }
  t.wraps = Wraparounds(t.dims, chip);
  return t;
}

Result<Topology> CompactSlice(int64_t chips, const ChipSpec& chip) {
  if (chips < 1) return InvalidArgumentError("a slice holds at least one chip, not " + std::to_string(chips));
  const int64_t longest = chip.pod_axis > 0 ? chip.pod_axis : kMaxAxis;
  auto none = [&] {
    return InvalidArgumentError("no " + std::string(chip.name) + " slice holds " + std::to_string(chips) +
                                " chips (a pod holds " + std::to_string(chip.pod_chips) + ", at most " +
                                std::to_string(longest) + " along an axis)");
  };
  if (chips > chip.pod_chips) return none();
  std::optional<std::vector<int64_t>> best;
  // Axes a <= b (<= c) whose product is `chips`: the shortest longest axis
  // wins, then the longest shortest one.
  for (int64_t a = 1; a <= longest && a <= chips; ++a) {
    if (chips % a != 0) continue;
    const int64_t rest = chips / a;
    if (chip.torus_dims == 2) {
      if (rest >= a && rest <= longest && (!best || rest < best->back())) best = std::vector<int64_t>{a, rest};
      continue;
    }
    for (int64_t b = a; b <= longest && b <= rest; ++b) {
      if (rest % b != 0) continue;
      const int64_t c = rest / b;
      const bool better = !best || c < best->back() || (c == best->back() && a > best->front());
      if (c >= b && c <= longest && better) best = std::vector<int64_t>{a, b, c};
    }
  }
  if (!best) return none();
  std::string text;
  for (int64_t d : *best) text += (text.empty() ? "" : "x") + std::to_string(d);
  return ParseTopology(text, chip);
}

}  // namespace kiln::runtime
