// kiln_stablehlo_parse_bench: throughput of the StableHLO front end next
// to the HLO text front end on the same programs.
//
//   kiln_stablehlo_parse_bench [stablehlo_dir] [repetitions]
//
// stablehlo_dir defaults to ../shared/stablehlo, then to the one beside the
// corpus the build was configured with. For the programs of its jax/,
// dynamic/ and quantized/ folders (each file one program), single-threaded
// and best of `repetitions` (default 3), it measures
//   stablehlo  ParseMlirText + ConvertToHlo + FingerprintModule of the file
//   hlo        ParseModule + FingerprintModule of the HLO text
//              `kiln parse --print-hlo` prints for the same program
// and prints MB/s (10^6 bytes of the input read, per second of the thread's
// CPU time) per folder and for the five largest programs, the ratio of the
// two rates (target: the StableHLO rate within 2x of the HLO rate), and
// the rate of the VHLO bytecode of vhlo/ (ReadBytecode + convert +
// fingerprint) beside its MLIR text. Never fails on timing: exit status 1
// only when a program cannot be read or converted.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <vector>


#include "bench/thread_cpu_clock.h"
#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/stablehlo/bytecode_reader.h"
#include "compiler/stablehlo/convert.h"
#include "compiler/stablehlo/text_parser.h"

namespace {

namespace fs = std::filesystem;

using Clock = kiln::bench::ThreadCpuClock;

constexpr double kTargetRatio = 2.0;

#ifndef KILN_CORPUS_DIR
#define KILN_CORPUS_DIR "../shared/corpus"
#endif

volatile uint64_t g_sink = 0;

struct Program {
  std::string name;
  std::string mlir;  // MLIR text or bytecode
  std::string hlo;   // the HLO text printed for it
};

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// The front end from bytes to a key: text or bytecode.
kiln::Result<kiln::hlo::Hash128> StablehloKey(const Program& p, bool bytecode) {
  kiln::Result<kiln::stablehlo::MlirModule> m =
      bytecode ? kiln::stablehlo::ReadBytecode(p.mlir, p.name) : kiln::stablehlo::ParseMlirText(p.mlir, p.name);
  if (!m) return std::unexpected(m.error());
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::hlo::Module> module, kiln::stablehlo::ConvertToHlo(*m));
  KILN_ASSIGN_OR_RETURN(kiln::hlo::Fingerprint fp, kiln::hlo::FingerprintModule(*module, {}));
  return fp.key;
}

kiln::Result<kiln::hlo::Hash128> HloKey(const Program& p) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::hlo::Module> module, kiln::hlo::ParseModule(p.hlo, p.name));
  KILN_ASSIGN_OR_RETURN(kiln::hlo::Fingerprint fp, kiln::hlo::FingerprintModule(*module, {}));
  return fp.key;
}

// Best-of-`repetitions` seconds of `work`, or a negative value when it fails.
double Best(int repetitions, const std::function<kiln::Result<kiln::hlo::Hash128>()>& work) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repetitions; ++r) {
    auto a = Clock::now();
    kiln::Result<kiln::hlo::Hash128> key = work();
    auto b = Clock::now();
    if (!key) {
      std::fprintf(stderr, "%s\n", key.error().ToString().c_str());
      return -1;
    }
    g_sink = g_sink + key->low;
    best = std::min(best, std::chrono::duration<double>(b - a).count());
  }
  return best;
}

struct Totals {
  size_t mlir_bytes = 0;
  size_t hlo_bytes = 0;
  double mlir_seconds = 0;
  double hlo_seconds = 0;
};

double MBps(size_t bytes, double seconds) { return static_cast<double>(bytes) / 1e6 / seconds; }

void PrintRow(const std::string& label, const Totals& t) {
  const double s = MBps(t.mlir_bytes, t.mlir_seconds);
  const double h = MBps(t.hlo_bytes, t.hlo_seconds);
  std::printf("%-48s %9.2f %9.1f %9.2f %9.1f %7.2fx %7.2fx\n", label.c_str(), t.mlir_bytes / 1e6, s,
              t.hlo_bytes / 1e6, h, h / s, t.mlir_seconds / t.hlo_seconds);
}

// Reads the programs of `folder` (files ending in `suffix`); false when one
// does not convert.
bool LoadFolder(const fs::path& dir, const std::string& suffix, bool bytecode, std::vector<Program>& out) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file() && it->path().filename().string().ends_with(suffix)) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    Program p{f.filename().string(), ReadFile(f), ""};
    kiln::Result<kiln::stablehlo::MlirModule> m =
        bytecode ? kiln::stablehlo::ReadBytecode(p.mlir, p.name) : kiln::stablehlo::ParseMlirText(p.mlir, p.name);
    if (!m) {
      std::fprintf(stderr, "%s: %s\n", f.c_str(), m.error().ToString().c_str());
      return false;
    }
    auto module = kiln::stablehlo::ConvertToHlo(*m);
    if (!module) {
      std::fprintf(stderr, "%s: %s\n", f.c_str(), module.error().ToString().c_str());
      return false;
    }
    p.hlo = kiln::hlo::PrintModule(**module);
    out.push_back(std::move(p));
  }
  return true;
}

bool Measure(const std::vector<Program>& programs, bool bytecode, int repetitions, Totals& totals,
             std::vector<std::pair<const Program*, Totals>>* each) {
  for (const Program& p : programs) {
    const double s = Best(repetitions, [&] { return StablehloKey(p, bytecode); });
    const double h = Best(repetitions, [&] { return HloKey(p); });
    if (s < 0 || h < 0) return false;
    Totals t{p.mlir.size(), p.hlo.size(), s, h};
    totals.mlir_bytes += t.mlir_bytes;
    totals.hlo_bytes += t.hlo_bytes;
    totals.mlir_seconds += s;
    totals.hlo_seconds += h;
    if (each != nullptr) each->push_back({&p, t});
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path root = argc > 1 ? fs::path(argv[1]) : fs::path("../shared/stablehlo");
  std::error_code ec;
  if (!fs::is_directory(root, ec)) root = fs::path(KILN_CORPUS_DIR).parent_path() / "stablehlo";
  const int repetitions = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  std::printf("kiln_stablehlo_parse_bench: programs under %s, best of %d, 1 thread\n", root.c_str(), repetitions);
  std::printf("stablehlo = ParseMlirText + ConvertToHlo + FingerprintModule; hlo = ParseModule + FingerprintModule "
              "of the printed HLO;\nMB/s = 10^6 input bytes per second of thread CPU time; rate ratio = hlo MB/s / "
              "stablehlo MB/s; time ratio = stablehlo time / hlo time\n\n");
  std::printf("%-48s %9s %9s %9s %9s %8s %8s\n", "programs", "MLIR MB", "MB/s", "HLO MB", "MB/s", "rates", "times");
  Totals all;
  std::vector<std::pair<const Program*, Totals>> each;
  std::vector<std::vector<Program>> keep;
  for (const char* folder : {"jax", "dynamic", "quantized"}) {
    keep.emplace_back();
    if (!LoadFolder(root / folder, ".mlir", false, keep.back())) return 1;
    Totals t;
    if (!Measure(keep.back(), false, repetitions, t, &each)) return 1;
    PrintRow(std::string(folder) + "/ (" + std::to_string(keep.back().size()) + " programs)", t);
    all.mlir_bytes += t.mlir_bytes;
    all.hlo_bytes += t.hlo_bytes;
    all.mlir_seconds += t.mlir_seconds;
    all.hlo_seconds += t.hlo_seconds;
  }
  PrintRow("all text programs", all);
  std::sort(each.begin(), each.end(),
            [](const auto& a, const auto& b) { return a.second.mlir_bytes > b.second.mlir_bytes; });
  std::printf("\nlargest:\n");
  for (size_t i = 0; i < each.size() && i < 5; ++i) {
    std::string label = each[i].first->name;
    if (label.size() > 48) label = "..." + label.substr(label.size() - 45);
    PrintRow(label, each[i].second);
  }
  // VHLO artifacts beside their MLIR text.
  std::vector<Program> text, bytecode;
  if (!LoadFolder(root / "vhlo", ".mlir", false, text) || !LoadFolder(root / "vhlo", ".mlir.bc", true, bytecode)) {
    return 1;
  }
  Totals t_text, t_bytecode;
  if (!Measure(text, false, repetitions, t_text, nullptr) || !Measure(bytecode, true, repetitions, t_bytecode, nullptr)) {
    return 1;
  }
  std::printf("\nVHLO artifacts (vhlo/, %zu each):\n", text.size());
  PrintRow("MLIR text", t_text);
  PrintRow("MLIR bytecode", t_bytecode);

  const double ratio = MBps(all.hlo_bytes, all.hlo_seconds) / MBps(all.mlir_bytes, all.mlir_seconds);
  std::printf("\ntarget: StableHLO parse+convert+fingerprint within %.0fx of HLO parse+fingerprint (MB/s)\n",
              kTargetRatio);
  std::printf("result: %.1f MB/s StableHLO, %.1f MB/s HLO: %.2fx, %s\n", MBps(all.mlir_bytes, all.mlir_seconds),
              MBps(all.hlo_bytes, all.hlo_seconds), ratio, ratio <= kTargetRatio ? "MET" : "NOT MET");
  return 0;
}
