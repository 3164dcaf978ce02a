// kiln_compile_bench: compile time of the planning pipeline against module
// size, over the whole HLO corpus.
//
//   kiln_compile_bench [corpus_dir] [repetitions]
//
// corpus_dir defaults to ../shared/corpus, then to the corpus the build was
// configured with. For every module that parses and verifies, best of
// `repetitions` (default 3) runs, each on a fresh parse of the module, it
// times (thread CPU time; stage columns are wall time) PlanModule with the
// heuristic plan: passes (verifier off, as in
// release builds) + fusion planning + tiling + buffer assignment + cost
// model. The baseline, in the same process, is ParseModule on the same
// text. It prints the largest modules, the least-squares slope of compile
// time against instruction count in ms per 1,000 instructions (target
// <= 10), the same slope for parsing and their ratio, and the exponent of
// a log-log fit over modules of >= 200 instructions (1.0 = linear). Never
// fails on timing: exit status 1 only when the corpus cannot be read.
#include <algorithm>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/driver/plan_module.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"

namespace {

namespace fs = std::filesystem;

constexpr double kTargetMsPer1000 = 10.0;

#ifndef KILN_CORPUS_DIR
#define KILN_CORPUS_DIR "../shared/corpus"
#endif

struct Sample {
  std::string name;
  double instructions = 0;
  double compile_ms = std::numeric_limits<double>::infinity();
  double parse_ms = std::numeric_limits<double>::infinity();
  kiln::driver::StageTimes stages;
};

// CPU time of this thread in ms: the machine is shared, so wall time
// would measure the neighbours too.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Least-squares slope of y against x.
double Slope(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(x.size());
  my /= static_cast<double>(y.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    num += (x[i] - mx) * (y[i] - my);
    den += (x[i] - mx) * (x[i] - mx);
  }
  return den > 0 ? num / den : 0;
}

fs::path FindCorpus(int argc, char** argv) {
  if (argc > 1) return argv[1];
  if (fs::is_directory("../shared/corpus/hlo")) return "../shared/corpus";
  return KILN_CORPUS_DIR;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
  fs::path corpus = FindCorpus(argc, argv);
  int repetitions = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(corpus / "hlo", ec);
       !ec && it != fs::end(it); it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".hlo") files.push_back(it->path());
  }
  if (files.empty()) {
    std::fprintf(stderr, "no .hlo files under %s/hlo\n", corpus.c_str());
    return 1;
  }
  std::sort(files.begin(), files.end());

  kiln::driver::CompileOptions options;
  options.plan = kiln::fusion::PlanKind::kHeuristic;
  options.chip = "v5p";
  options.verify_passes = false;

  std::vector<Sample> samples;
  int skipped = 0, failed = 0;
  for (const fs::path& path : files) {
    std::string text = ReadFile(path);
    Sample sample;
    sample.name = path.filename().string();
    bool ok = true;
    for (int r = 0; r < repetitions && ok; ++r) {
      double t0 = ThreadCpuMs();
      auto module = kiln::hlo::ParseModule(text, sample.name);
      double t1 = ThreadCpuMs();
      if (!module || !kiln::hlo::VerifyModule(**module)) {
        ++skipped;
        ok = false;
        break;
      }
      sample.instructions = static_cast<double>((*module)->instruction_count());
      double t2 = ThreadCpuMs();
      auto compiled = kiln::driver::PlanModule(**module, options);
      double t3 = ThreadCpuMs();
      if (!compiled) {
        ++failed;
        ok = false;
        break;
      }
      sample.parse_ms = std::min(sample.parse_ms, t1 - t0);
      if (t3 - t2 < sample.compile_ms) {
        sample.compile_ms = t3 - t2;
        sample.stages = compiled->times;
      }
    }
    if (ok) samples.push_back(sample);
  }

  std::sort(samples.begin(), samples.end(),
            [](const Sample& a, const Sample& b) { return a.instructions > b.instructions; });
  std::printf("%-70s %8s %10s %8s %8s %8s %8s %10s\n", "largest modules", "instrs", "compile ms",
              "passes", "plan", "buffers", "cost", "parse ms");
  for (size_t i = 0; i < std::min<size_t>(samples.size(), 8); ++i) {
    const Sample& s = samples[i];
    std::printf("%-70.70s %8.0f %10.2f %8.2f %8.2f %8.2f %8.2f %10.2f\n", s.name.c_str(),
                s.instructions, s.compile_ms, s.stages.passes_ms, s.stages.planning_ms,
                s.stages.buffers_ms, s.stages.cost_ms, s.parse_ms);
  }

  std::vector<double> x, compile, parse, log_x, log_y;
  double total_instr = 0, total_ms = 0;
  for (const Sample& s : samples) {
    x.push_back(s.instructions / 1000.0);
    compile.push_back(s.compile_ms);
    parse.push_back(s.parse_ms);
    total_instr += s.instructions;
    total_ms += s.compile_ms;
    if (s.instructions >= 200) {
      log_x.push_back(std::log(s.instructions));
      log_y.push_back(std::log(std::max(s.compile_ms, 1e-6)));
    }
  }
  double compile_slope = Slope(x, compile);
  double parse_slope = Slope(x, parse);
  std::printf("\n%zu modules timed (%d did not parse/verify, %d did not compile), best of %d\n",
              samples.size(), skipped, failed, repetitions);
  std::printf("total: %.0f instructions in %.1f ms = %.3f ms per 1,000 instructions\n",
              total_instr, total_ms, total_ms / (total_instr / 1000.0));
  std::printf("compile slope: %.3f ms per 1,000 instructions (target <= %.1f): %s\n",
              compile_slope, kTargetMsPer1000,
              compile_slope <= kTargetMsPer1000 ? "met" : "NOT met");
  std::printf("baseline parse slope: %.3f ms per 1,000 instructions; compile/parse = %.2fx\n",
              parse_slope, parse_slope > 0 ? compile_slope / parse_slope : 0.0);
  if (log_x.size() >= 2) {
    std::printf("growth: compile time ~ instructions^%.2f over %zu modules of >= 200 "
                "instructions (1.00 = linear)\n",
                Slope(log_x, log_y), log_x.size());
  }
  return 0;
}
