#include "runtime/eval/slice_rendezvous.h"

#include <algorithm>
#include <chrono>

namespace kiln::runtime {
namespace {

// How often a waiting device looks at its Interrupt.
constexpr std::chrono::milliseconds kInterruptPoll{20};

std::string GroupText(std::span<const int64_t> group) {
  std::string out = "{";
  for (size_t i = 0; i < group.size(); ++i) out += (i ? "," : "") + std::to_string(group[i]);
  return out + "}";
}

}  // namespace

SliceRendezvous::SliceRendezvous(int64_t device_count)
    : next_(std::max<int64_t>(device_count, 0), 0), finished_(std::max<int64_t>(device_count, 0), false) {}

std::string SliceRendezvous::Blocker(const Meeting& meeting) const {
  for (size_t i = 0; i < meeting.group.size(); ++i) {
    if (meeting.parts[i] == nullptr && finished_[meeting.group[i]]) {
      return "device " + std::to_string(meeting.group[i]) + " ended without reaching %" + meeting.instruction;
    }
  }
  return "";
}

Result<std::vector<Contribution>> SliceRendezvous::Exchange(int64_t device, std::span<const int64_t> group,
                                                            std::string_view instruction,
                                                            Contribution contribution,
                                                            const Interrupt* interrupt) {
  const auto position = std::find(group.begin(), group.end(), device);
  if (device < 0 || device >= device_count() || position == group.end()) {
    return std::unexpected(InvalidArgumentError("%" + std::string(instruction) + ": device " +
                                                std::to_string(device) + " is not in its group " +
                                                GroupText(group)));
  }
  for (int64_t member : group) {
    if (member < 0 || member >= device_count()) {
      return std::unexpected(InvalidArgumentError("%" + std::string(instruction) + ": group " + GroupText(group) +
                                                  " names a device outside the slice of " +
                                                  std::to_string(device_count())));
    }
  }
  std::unique_lock lock(mu_);
  if (aborted_) return std::unexpected(*aborted_);
  const int64_t sequence = next_[device]++;
  if (group.size() == 1) return std::vector<Contribution>{std::move(contribution)};

  const auto key = std::make_pair(sequence, group.front());
  auto [it, created] = meetings_.try_emplace(key);
  Meeting& meeting = it->second;
  if (created) {
    meeting.instruction = std::string(instruction);
    meeting.group.assign(group.begin(), group.end());
    meeting.parts.resize(group.size());
  } else if (meeting.instruction != instruction || !std::ranges::equal(meeting.group, group)) {
    Error error = FailedPreconditionError(
        "devices disagree at collective #" + std::to_string(sequence) + ": device " + std::to_string(device) +
        " runs %" + std::string(instruction) + " over " + GroupText(group) + " where device " +
        std::to_string(meeting.group.front()) + "'s group runs %" + meeting.instruction + " over " +
        GroupText(meeting.group));
    aborted_ = error;
    cv_.notify_all();
    return std::unexpected(std::move(error));
  }
  meeting.parts[position - group.begin()] = std::move(contribution);
  ++meeting.arrived;
  cv_.notify_all();

  while (meeting.arrived < meeting.group.size()) {
    if (aborted_) return std::unexpected(*aborted_);
    if (std::string blocker = Blocker(meeting); !blocker.empty()) {
      return std::unexpected(FailedPreconditionError(blocker).WithReason(std::string(kPeerDeviceEnded)));
    }
    if (interrupt != nullptr && interrupt->stopped()) {
      const StopReason reason = interrupt->reason();
      return std::unexpected(Error::Coded(StopErrorCode(reason), "stopped (" + std::string(StopReasonText(reason)) +
                                                                     ") waiting for the devices of %" +
                                                                     meeting.instruction));
    }
    cv_.wait_for(lock, kInterruptPoll);
  }
  std::vector<Contribution> parts = meeting.parts;
  if (++meeting.left == meeting.group.size()) meetings_.erase(it);
  return parts;
}

void SliceRendezvous::Finished(int64_t device) {
  std::lock_guard lock(mu_);
  if (device >= 0 && device < device_count()) finished_[device] = true;
  cv_.notify_all();
}

void SliceRendezvous::Abort(const Error& error) {
  std::lock_guard lock(mu_);
  if (!aborted_) aborted_ = error;
  cv_.notify_all();
}

}  // namespace kiln::runtime
