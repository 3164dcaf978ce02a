// Renderings of a DeviceProfile: the JSON that `kiln run --json` and the
// HTTP execute endpoint return, the text table `kiln run` prints, and the
// Chrome trace-event file (`--trace F.json`, opens in Perfetto).
//
// Pure functions except WriteChromeTrace, which writes one file (an Error
// names the path when it cannot). Thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "runtime/timing/device_profile.h"

namespace kiln::runtime::timing {

// {"chip", "topology", "chips", "device_us", "flops", "bytes",
//  "ideal_bytes", "hfu", "kernels": [{"name", "kind", "us", "bound",
//  "flops", "bytes", "ideal_bytes", "rereads": [{"input", "times"}],
//  "mxu_utilization", "grid_steps", "tiling"}]}. A collective kernel timed
// over a slice's ICI adds "ici_us" and "collectives": [{"kind",
// "participants", "groups", "payload_bytes", "ici_bytes", "link_bytes",
// "us", "transfer_us", "latency_us", "route"}].
nlohmann::json ProfileToJson(const DeviceProfile& profile);

// `value` with an SI prefix and `unit`: "3.5 GB", "141 TFLOP".
std::string Scaled(double value, const char* unit);

// One line per kernel (name, time, bound, FLOPs, bytes, ideal bytes, MXU
// utilization, steps, tiling and the inputs it re-reads) and a total line
// with the HFU.
// `top` > 0: only the `top` kernels that take the most time, in program
// order, and a line for the rest (how many, their share of the time).
std::string FormatProfile(const DeviceProfile& profile, size_t top = 0);

// Trace-event JSON: one complete event ("ph":"X", ts/dur in microseconds)
// per kernel on a chip's track (pid = chip, tid = TensorCore), with
// metadata events naming the tracks. A one-chip run has the track of
// `chip_index`; a slice's run one track per chip, up to kMaxTraceChips,
// each with every kernel (the chips run the per-chip program in step).
inline constexpr int kMaxTraceChips = 64;
nlohmann::json ChromeTraceJson(const DeviceProfile& profile, int chip_index = 0);
Status WriteChromeTrace(const DeviceProfile& profile, const std::string& path);

}  // namespace kiln::runtime::timing
