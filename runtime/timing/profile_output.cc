#include "runtime/timing/profile_output.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

namespace kiln::runtime::timing {
namespace {

constexpr double kMicros = 1e6;
constexpr size_t kLongestStepsShown = 6;

// "in1 x8.0, in2 x4.0": the inputs a kernel re-reads.
std::string RereadText(const KernelProfile& k) {
  std::string out;
  char buffer[48];
  for (const KernelProfile::Reread& r : k.rereads) {
    std::snprintf(buffer, sizeof(buffer), "%sin%d x%.1f", out.empty() ? "" : ", ", r.input, r.times);
    out += buffer;
  }
  return out;
}

// A collective kernel's ICI part: one entry per collective it performs.
nlohmann::json CollectivesJson(const KernelProfile& k) {
  nlohmann::json out = nlohmann::json::array();
  for (const CollectiveTime& c : k.collectives) {
    out.push_back({{"kind", c.kind},
                   {"participants", c.participants},
                   {"groups", c.groups},
                   {"payload_bytes", c.payload_bytes},
                   {"ici_bytes", c.ici_bytes},
                   {"link_bytes", c.link_bytes},
                   {"us", c.seconds * kMicros},
                   {"transfer_us", c.transfer_seconds * kMicros},
                   {"latency_us", c.latency_seconds * kMicros},
                   {"route", c.route},
                   {"runs", c.runs}});
  }
  return out;
}

// A step-by-step kernel's steps, for --json.
nlohmann::json StepsJson(const KernelProfile& k) {
  nlohmann::json out = nlohmann::json::array();
  for (const KernelProfile::Step& s : k.steps) {
    out.push_back({{"name", s.name},
                   {"runs", s.runs},
                   {"us", s.seconds * kMicros},
                   {"bytes", s.bytes},
                   {"bound", BoundName(s.bound)}});
  }
  return out;
}

// The longest steps of a step-by-step kernel, longest first, as rows under
// its own: which ops of a loop body its time goes to.
void AppendLongestSteps(const KernelProfile& k, std::string& out) {
  if (k.steps.empty()) return;
  std::vector<const KernelProfile::Step*> longest;
  for (const KernelProfile::Step& s : k.steps) longest.push_back(&s);
  const size_t shown = std::min(longest.size(), kLongestStepsShown);
  std::partial_sort(longest.begin(), longest.begin() + shown, longest.end(),
                    [](const auto* a, const auto* b) { return a->seconds > b->seconds; });
  char line[512];
  for (size_t i = 0; i < shown; ++i) {
    const KernelProfile::Step& s = *longest[i];
    std::string name(2, ' ');  // indented under its kernel
    name += s.name;
    std::snprintf(line, sizeof(line),
                  "%-28.28s %9.3f us  %-8s %12s %12s %12s %6s %10.0f  step of %s (%.1f%%)\n", name.c_str(),
                  s.seconds * kMicros, std::string(BoundName(s.bound)).c_str(), "",
                  Scaled(s.bytes, "B").c_str(), "", "", s.runs, k.name.c_str(),
                  k.seconds > 0 ? 100 * s.seconds / k.seconds : 0.0);
    out += line;
  }
  if (longest.size() > shown) {
    std::snprintf(line, sizeof(line), "  (%zu more steps of %s in --json)\n", longest.size() - shown,
                  k.name.c_str());
    out += line;
  }
}

}  // namespace

std::string Scaled(double value, const char* unit) {
  static constexpr const char* kPrefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  int i = 0;
  while (value >= 1000 && i < 6) {
    value /= 1000;
    ++i;
  }
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "%.3g %s%s", value, kPrefixes[i], unit);
  return buffer;
}

nlohmann::json ProfileToJson(const DeviceProfile& profile) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelProfile& k : profile.kernels) {
    nlohmann::json rereads = nlohmann::json::array();
    for (const KernelProfile::Reread& r : k.rereads) rereads.push_back({{"input", r.input}, {"times", r.times}});
    nlohmann::json entry = {{"name", k.name},
                            {"kind", k.kind},
                            {"us", k.seconds * kMicros},
                            {"bound", BoundName(k.bound)},
                            {"flops", k.flops},
                            {"bytes", k.bytes},
                            {"ideal_bytes", k.ideal_bytes},
                            {"rereads", std::move(rereads)},
                            {"mxu_utilization", k.mxu_utilization},
                            {"grid_steps", k.grid_steps},
                            {"tiling", k.tiling}};
    if (!k.collectives.empty()) {
      entry["ici_us"] = k.ici_seconds * kMicros;
      entry["collectives"] = CollectivesJson(k);
    }
    if (!k.steps.empty()) entry["steps"] = StepsJson(k);
    kernels.push_back(std::move(entry));
  }
  return {{"chip", profile.chip},
          {"topology", profile.topology},
          {"chips", profile.chips},
          {"device_us", profile.seconds * kMicros},
          {"flops", profile.flops},
          {"bytes", profile.bytes},
          {"ideal_bytes", profile.ideal_bytes},
          {"hfu", profile.hfu},
          {"kernels", std::move(kernels)}};
}

std::string FormatProfile(const DeviceProfile& profile, size_t top) {
  std::string out;
  char line[1024];
  // The kernels shown: all, or the `top` slowest (kept in program order).
  std::vector<bool> shown(profile.kernels.size(), top == 0 || top >= profile.kernels.size());
  if (!shown.empty() && !shown.front()) {
    std::vector<size_t> order(profile.kernels.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
                      [&](size_t a, size_t b) { return profile.kernels[a].seconds > profile.kernels[b].seconds; });
    for (size_t i = 0; i < top; ++i) shown[order[i]] = true;
  }
  size_t hidden = 0;
  double hidden_seconds = 0;
  std::snprintf(line, sizeof(line), "%-28s %12s  %-8s %12s %12s %12s %6s %10s  %s\n", "kernel", "time",
                "bound", "flops", "bytes", "ideal", "mxu", "steps", "tiling");
  out += line;
  for (size_t i = 0; i < profile.kernels.size(); ++i) {
    const KernelProfile& k = profile.kernels[i];
    if (!shown[i]) {
      ++hidden;
      hidden_seconds += k.seconds;
      continue;
    }
    const std::string rereads = RereadText(k);
    std::snprintf(line, sizeof(line), "%-28.28s %9.3f us  %-8s %12s %12s %12s %5.1f%% %10.0f  %s%s%s\n",
                  k.name.c_str(), k.seconds * kMicros, std::string(BoundName(k.bound)).c_str(),
                  Scaled(k.flops, "FLOP").c_str(), Scaled(k.bytes, "B").c_str(), Scaled(k.ideal_bytes, "B").c_str(),
                  k.mxu_utilization * 100, k.grid_steps, k.tiling.c_str(), rereads.empty() ? "" : "; re-reads ",
                  rereads.c_str());
    out += line;
    AppendLongestSteps(k, out);
  }
  if (hidden > 0) {
    std::snprintf(line, sizeof(line), "... %zu more kernels (%.1f%% of the time; --top 0 shows them all)\n", hidden,
                  profile.seconds > 0 ? 100 * hidden_seconds / profile.seconds : 0.0);
    out += line;
  }
  const std::string where =
      profile.chips > 1 ? profile.chip + " " + profile.topology + " (each of " + std::to_string(profile.chips) + " chips)"
                        : profile.chip;
  std::snprintf(line, sizeof(line), "device time on %s: %.3f us (%zu kernels, %s, %s moved, %s ideal, HFU %.1f%%)\n",
                where.c_str(), profile.seconds * kMicros, profile.kernels.size(),
                Scaled(profile.flops, "FLOP").c_str(), Scaled(profile.bytes, "B").c_str(),
                Scaled(profile.ideal_bytes, "B").c_str(), profile.hfu * 100);
  out += line;
  return out;
}

nlohmann::json ChromeTraceJson(const DeviceProfile& profile, int chip_index) {
  nlohmann::json events = nlohmann::json::array();
  // One track per chip of a slice (every chip runs every kernel of the
  // per-chip program at the same time), up to kMaxTraceChips.
  const int first = profile.chips > 1 ? 0 : chip_index;
  const int tracks = profile.chips > 1 ? std::min(profile.chips, kMaxTraceChips) : 1;
  for (int chip = first; chip < first + tracks; ++chip) {
    std::string name = profile.chip + " chip " + std::to_string(chip);
    if (profile.chips > 1) name += " of " + profile.topology;
    if (profile.chips > tracks && chip == first + tracks - 1) {
      name += " (the first " + std::to_string(tracks) + " of " + std::to_string(profile.chips) + " chips shown)";
    }
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", chip}, {"args", {{"name", name}}}});
    events.push_back(
        {{"name", "thread_name"}, {"ph", "M"}, {"pid", chip}, {"tid", 0}, {"args", {{"name", "TensorCore"}}}});
    // Collective kernels run on the links beside the core: a track of their own.
    bool links = false;
    for (const KernelProfile& k : profile.kernels) links |= k.on_links;
    if (links) {
      events.push_back(
          {{"name", "thread_name"}, {"ph", "M"}, {"pid", chip}, {"tid", 1}, {"args", {{"name", "ICI"}}}});
    }
    for (const KernelProfile& k : profile.kernels) {
      nlohmann::json args = {{"bound", BoundName(k.bound)},
                             {"flops", k.flops},
                             {"bytes", k.bytes},
                             {"ideal_bytes", k.ideal_bytes},
                             {"mxu_utilization", k.mxu_utilization},
                             {"grid_steps", k.grid_steps},
                             {"tiling", k.tiling}};
      if (!k.collectives.empty()) args["collectives"] = CollectivesJson(k);
      events.push_back({{"name", k.name},
                        {"cat", k.kind.empty() ? "kernel" : k.kind},
                        {"ph", "X"},
                        {"ts", k.start_seconds * kMicros},
                        {"dur", k.seconds * kMicros},
                        {"pid", chip},
                        {"tid", k.on_links ? 1 : 0},
                        {"args", std::move(args)}});
    }
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
}

Status WriteChromeTrace(const DeviceProfile& profile, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return ErrnoError(errno, "cannot write trace " + path + ": " + std::strerror(errno));
  out << ChromeTraceJson(profile).dump() << '\n';
  out.close();
  if (!out) return ErrnoError(errno, "cannot write trace " + path + ": write failed");
  return Ok();
}

}  // namespace kiln::runtime::timing
