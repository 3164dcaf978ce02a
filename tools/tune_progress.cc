#include "tools/tune_progress.h"

#include <unistd.h>

namespace kiln::tools {

TuneProgressLine::TuneProgressLine(std::FILE* out, const autotune::Progress& progress, int64_t max_trials,
                                   double max_seconds, bool enabled)
    : out_(out),
      progress_(progress),
      max_trials_(max_trials),
      max_seconds_(max_seconds),
      terminal_(isatty(fileno(out)) == 1) {
  if (enabled) printer_ = std::thread([this] { Run(); });
}

TuneProgressLine::~TuneProgressLine() { Finish(); }

void TuneProgressLine::Finish() {
  if (!printer_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  printer_.join();
  // A terminal's line gives way to the report; a log keeps the last figures.
  std::fprintf(out_, terminal_ ? "\r\033[K" : "%s\n", Line().c_str());
  std::fflush(out_);
}

std::string TuneProgressLine::Line() const {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int64_t trials = progress_.trials.load();
  const double heuristic = progress_.heuristic_us.load();
  const double best = progress_.best_us.load();
  char text[256];
  int n = std::snprintf(text, sizeof(text), "tuning: %lld", static_cast<long long>(trials));
  if (max_trials_ > 0) n += std::snprintf(text + n, sizeof(text) - n, "/%lld", static_cast<long long>(max_trials_));
  n += std::snprintf(text + n, sizeof(text) - n, " trials, %.1f", seconds);
  if (max_seconds_ > 0) n += std::snprintf(text + n, sizeof(text) - n, "/%.0f", max_seconds_);
  n += std::snprintf(text + n, sizeof(text) - n, " s");
  if (heuristic < 0) {
    std::snprintf(text + n, sizeof(text) - n, ", timing the heuristic plan");
  } else if (best > 0) {
    std::snprintf(text + n, sizeof(text) - n, ", best %.1f us of the heuristic's %.1f us (%.3fx)", best, heuristic,
                  heuristic / best);
  }
  return text;
}

void TuneProgressLine::Run() {
  const auto period = terminal_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(5000);
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, period, [this] { return stopping_; });
    if (stopping_) break;
    std::fprintf(out_, terminal_ ? "\r\033[K%s" : "%s\n", Line().c_str());
    std::fflush(out_);
  }
}

}  // namespace kiln::tools
