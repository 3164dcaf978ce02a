// SliceRendezvous: where the devices of one simulated slice meet to swap the
// values of their collectives.
//
// Every device of a slice runs the same per-device program on a thread of
// its own (runtime/spmd/slice_execution.h). At a collective a device calls
// Exchange with the group the instruction puts it in (collective_groups.h);
// the call waits until every member has put its contribution in and returns
// all of them in group order, shared, never copied. Devices number their
// collectives in the order they run them, so the k-th collective of one
// device meets the k-th of each other member.
//
// No wait can hang: a member that runs a different instruction at that
// point, a member that finished without coming (reason kPeerDeviceEnded),
// Abort or a stopped Interrupt end it with an error naming the
// instruction and the devices.
//
// Thread-safe; each device calls Exchange from one thread at a time.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/collective_groups.h"
#include "runtime/eval/interrupt.h"

namespace kiln::runtime {

// The reason of a wait ended by a member that finished (or failed) without
// coming: the waiting device did nothing wrong itself.
inline constexpr std::string_view kPeerDeviceEnded = "peer_device_ended";

// What one device puts into a collective: its operands, in order.
using Contribution = std::shared_ptr<const std::vector<hlo::Literal>>;

class SliceRendezvous {
 public:
  explicit SliceRendezvous(int64_t device_count);

  int64_t device_count() const { return static_cast<int64_t>(next_.size()); }

  // Device `device` (one of `group`) brings `contribution` to the
  // collective `instruction` (a name, for errors); returns every member's
  // contribution in group order. `interrupt` may be null.
  Result<std::vector<Contribution>> Exchange(int64_t device, std::span<const int64_t> group,
                                             std::string_view instruction, Contribution contribution,
                                             const Interrupt* interrupt);

  // The device's program ended (either way): members waiting for it fail.
  void Finished(int64_t device);
  // Ends every wait, now and later, with `error` (another device failed).
  void Abort(const Error& error);

 private:
  struct Meeting {
    std::string instruction;
    std::vector<int64_t> group;
    std::vector<Contribution> parts;  // by group position
    size_t arrived = 0;
    size_t left = 0;
  };
  // Why the meeting cannot complete, or "" while it still may.
  std::string Blocker(const Meeting& meeting) const;

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<int64_t, int64_t>, Meeting> meetings_;  // (sequence, first member)
  std::vector<int64_t> next_;                                // per device
  std::vector<bool> finished_;
  std::optional<Error> aborted_;
};

// One device of a slice and where it meets the others (EvalOptions::slice).
struct SliceMember {
  SliceRendezvous* rendezvous = nullptr;  // borrowed
  hlo::SliceDevice device;
};

}  // namespace kiln::runtime
