// kiln_parse_bench: throughput of the HLO front end on the largest corpus
// modules, next to the speed of hashing the same bytes.
//
//   kiln_parse_bench [corpus_dir] [repetitions]
//
// corpus_dir defaults to ../shared/corpus (as seen from the checkout), then
// to the corpus the build was configured with. For each of the five largest
// .hlo files under it, single-threaded and best of `repetitions` (default
// 5) runs each, it measures:
//   raw hash  XXH3-128 over the file's bytes (the floor: touching the input)
//   parse     ParseModule alone
//   fp        FingerprintModule alone, on the parsed module
//   parse+fp  ParseModule then FingerprintModule (what a cache lookup costs)
//   free      destroying the parsed module (a server frees one per request)
// and prints MB/s (10^6 bytes of HLO text per second of the thread's CPU
// time, so that other work on a shared machine does not count) per module, the
// aggregate (total bytes over total best times) and how many times slower
// parse+fp is than the raw hash. A scaling section then parses one value
// with 20,000 and with 80,000 users (hostile input arrives over HTTP) and
// prints the time ratio: about 4 when parsing is linear in the number of
// users, about 16 when it is quadratic. It reports whether the target is met but
// never fails on timing: exit status 1 only when the corpus cannot be read
// or a module does not parse.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <xxhash.h>

#include "bench/thread_cpu_clock.h"
#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/parser.h"

namespace {

namespace fs = std::filesystem;
using Clock = kiln::bench::ThreadCpuClock;

constexpr double kTargetMBps = 150.0;
constexpr size_t kModules = 5;

#ifndef KILN_CORPUS_DIR
#define KILN_CORPUS_DIR "../shared/corpus"
#endif

// Keeps results alive so the timed work cannot be optimised away.
volatile uint64_t g_sink = 0;

struct Input {
  fs::path path;
  std::string text;
};

struct Timings {
  double raw_hash = std::numeric_limits<double>::infinity();  // seconds, best run
  double parse = std::numeric_limits<double>::infinity();
  double fingerprint = std::numeric_limits<double>::infinity();
  double parse_fp = std::numeric_limits<double>::infinity();
  double free = std::numeric_limits<double>::infinity();
};

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double MBps(size_t bytes, double seconds) { return static_cast<double>(bytes) / 1e6 / seconds; }

fs::path ChooseCorpus(int argc, char** argv) {
  if (argc > 1) return argv[1];
  std::error_code ec;
  if (fs::is_directory("../shared/corpus", ec)) return "../shared/corpus";
  return KILN_CORPUS_DIR;
}

// The `count` largest .hlo files under `root`, largest first.
std::vector<fs::path> LargestModules(const fs::path& root, size_t count) {
  std::vector<std::pair<uintmax_t, fs::path>> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".hlo") {
      files.emplace_back(it->file_size(ec), it->path());
    }
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<fs::path> out;
  for (size_t i = 0; i < files.size() && i < count; ++i) out.push_back(files[i].second);
  return out;
}

// Returns false (after printing why) when the module does not parse or
// fingerprint.
bool Measure(const Input& in, int repetitions, Timings& t) {
  const std::string& text = in.text;
  const std::string name = in.path.filename().string();
  for (int r = 0; r < repetitions; ++r) {
    auto a = Clock::now();
    XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
    auto b = Clock::now();
    g_sink = g_sink + h.low64;
    t.raw_hash = std::min(t.raw_hash, Seconds(a, b));
  }
  for (int r = 0; r < repetitions; ++r) {
    auto a = Clock::now();
    kiln::Result<std::unique_ptr<kiln::hlo::Module>> m = kiln::hlo::ParseModule(text, name);
    auto b = Clock::now();
    if (!m) {
      std::fprintf(stderr, "%s: %s\n", in.path.c_str(), m.error().ToString().c_str());
      return false;
    }
    g_sink = g_sink + static_cast<uint64_t>((*m)->instruction_count());
    t.parse = std::min(t.parse, Seconds(a, b));
    // Fingerprint alone, on this parsed module.
    a = Clock::now();
    kiln::Result<kiln::hlo::Fingerprint> fp = kiln::hlo::FingerprintModule(**m, {});
    b = Clock::now();
    if (!fp) {
      std::fprintf(stderr, "%s: fingerprint: %s\n", in.path.c_str(), fp.error().ToString().c_str());
      return false;
    }
    g_sink = g_sink + fp->key.low;
    t.fingerprint = std::min(t.fingerprint, Seconds(a, b));
  }  // the module is freed outside the timed regions
  for (int r = 0; r < repetitions; ++r) {
    std::unique_ptr<kiln::hlo::Module> keep;
    auto a = Clock::now();
    kiln::Result<std::unique_ptr<kiln::hlo::Module>> m = kiln::hlo::ParseModule(text, name);
    if (!m) return false;
    kiln::Result<kiln::hlo::Fingerprint> fp = kiln::hlo::FingerprintModule(**m, {});
    auto b = Clock::now();
    if (!fp) return false;
    g_sink = g_sink + fp->key.high;
    keep = std::move(*m);
    t.parse_fp = std::min(t.parse_fp, Seconds(a, b));
    a = Clock::now();
    keep.reset();
    b = Clock::now();
    t.free = std::min(t.free, Seconds(a, b));
  }
  return true;
}

// Best-of-`repetitions` seconds to parse a module where one parameter has
// `users` users.
double ParseSecondsForUsers(int users, int repetitions) {
  std::string text = "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n";
  for (int i = 0; i < users; ++i) text += "  n" + std::to_string(i) + " = f32[] negate(p)\n";
  text += "  ROOT r = f32[] negate(p)\n}\n";
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repetitions; ++r) {
    auto a = Clock::now();
    kiln::Result<std::unique_ptr<kiln::hlo::Module>> m = kiln::hlo::ParseModule(text, "users.hlo");
    auto b = Clock::now();
    if (!m) return -1;
    best = std::min(best, Seconds(a, b));
  }
  return best;
}

void PrintRow(const char* label, size_t bytes, const Timings& t) {
  std::printf("%-52s %8.2f %10.0f %9.1f %9.1f %9.1f %7.1fx %8.2f %6.1f%%\n", label,
              static_cast<double>(bytes) / 1e6, MBps(bytes, t.raw_hash), MBps(bytes, t.parse),
              MBps(bytes, t.fingerprint), MBps(bytes, t.parse_fp), t.parse_fp / t.raw_hash,
              t.free * 1e3, 100.0 * t.free / t.parse);
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path corpus = ChooseCorpus(argc, argv);
  const int repetitions = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  std::vector<fs::path> paths = LargestModules(corpus, kModules);
  if (paths.empty()) {
    std::fprintf(stderr, "no .hlo files under %s\n", corpus.c_str());
    return 1;
  }
  std::vector<Input> inputs;
  for (const fs::path& p : paths) {
    std::ifstream f(p, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (!f.good() && !f.eof()) {
      std::fprintf(stderr, "cannot read %s\n", p.c_str());
      return 1;
    }
    inputs.push_back({p, std::move(text)});
  }

  std::printf("kiln_parse_bench: %zu largest modules under %s, best of %d, 1 thread\n",
              inputs.size(), corpus.c_str(), repetitions);
  std::printf("MB/s = 10^6 bytes of HLO text per second of thread CPU time; ratio = parse+fp time / raw hash time;\n"
              "free = ms to destroy the parsed module, and as a share of its parse time\n\n");
  std::printf("%-52s %8s %10s %9s %9s %9s %8s %8s %7s\n", "module", "MB", "raw hash", "parse", "fp",
              "parse+fp", "ratio", "free ms", "/parse");
  Timings total{0, 0, 0, 0, 0};
  size_t total_bytes = 0;
  for (const Input& in : inputs) {
    Timings t;
    if (!Measure(in, repetitions, t)) return 1;
    std::string label = in.path.filename().string();
    if (label.size() > 52) label = "..." + label.substr(label.size() - 49);
    PrintRow(label.c_str(), in.text.size(), t);
    total.raw_hash += t.raw_hash;
    total.parse += t.parse;
    total.fingerprint += t.fingerprint;
    total.parse_fp += t.parse_fp;
    total.free += t.free;
    total_bytes += in.text.size();
  }
  std::printf("\n");
  PrintRow("aggregate", total_bytes, total);

  const double achieved = MBps(total_bytes, total.parse_fp);
  std::printf("\ntarget: >= %.0f MB/s parse+fingerprint\n", kTargetMBps);
  std::printf("result: %.1f MB/s aggregate parse+fingerprint, %s (parse+fp is %.1fx the raw "
              "XXH3-128 time)\n",
              achieved, achieved >= kTargetMBps ? "MET" : "NOT MET", total.parse_fp / total.raw_hash);

  const double few = ParseSecondsForUsers(20000, repetitions);
  const double many = ParseSecondsForUsers(80000, repetitions);
  if (few < 0 || many < 0) {
    std::fprintf(stderr, "the many-users module does not parse\n");
    return 1;
  }
  std::printf("\nscaling: one value with 20k users parses in %.1f ms, with 80k in %.1f ms: %.1fx "
              "(4x is linear, 16x quadratic)\n",
              few * 1e3, many * 1e3, many / few);
  return 0;
}
