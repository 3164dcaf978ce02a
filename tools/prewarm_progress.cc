#include "tools/prewarm_progress.h"

#include <unistd.h>

#include <algorithm>

#include "base/str_cat.h"

namespace kiln::tools {
namespace {

std::string MinutesSeconds(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  char text[32];
  std::snprintf(text, sizeof(text), "%lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  return text;
}

// The last `width` characters of `text`, with "..." in front when cut.
std::string Tail(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  return "..." + text.substr(text.size() - (width - 3));
}

}  // namespace

ProgressMeter::ProgressMeter(std::FILE* out, std::string phase, int64_t total, bool enabled)
    : out_(out), phase_(std::move(phase)), total_(total), terminal_(isatty(fileno(out)) == 1), enabled_(enabled && total > 0) {
  if (enabled_) printer_ = std::thread([this] { Run(); });
}

ProgressMeter::~ProgressMeter() { Finish(); }

void ProgressMeter::Done(const std::string& current) {
  std::lock_guard lock(mutex_);
  ++done_;
  current_ = current;
}

void ProgressMeter::Finish() {
  if (!printer_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  printer_.join();
}

std::string ProgressMeter::Line(bool final) const {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(done_) / seconds : 0;
  std::string line = StrCat(phase_, " ", done_, "/", total_);
  if (terminal_) {
    constexpr int kWidth = 24;
    const int filled = total_ > 0 ? static_cast<int>(kWidth * done_ / total_) : kWidth;
    line += " [" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "]";
  }
  char figures[96];
  std::snprintf(figures, sizeof(figures), " %.1f/s", rate);
  line += figures;
  if (final) return line + " in " + MinutesSeconds(seconds);
  line += done_ > 0 && rate > 0 ? " ETA " + MinutesSeconds(static_cast<double>(total_ - done_) / rate) : " ETA --:--";
  if (!current_.empty()) line += "  " + Tail(current_, terminal_ ? 60 : 200);
  return line;
}

void ProgressMeter::Run() {
  const auto period = terminal_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(5000);
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, period, [this] { return stopping_; });
    if (stopping_) break;
    if (terminal_) {
      std::fprintf(out_, "\r\033[K%s", Line(false).c_str());
    } else {
      std::fprintf(out_, "%s\n", Line(false).c_str());
    }
    std::fflush(out_);
  }
  std::fprintf(out_, terminal_ ? "\r\033[K%s\n" : "%s\n", Line(true).c_str());
  std::fflush(out_);
}

}  // namespace kiln::tools
