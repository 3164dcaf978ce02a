// The parsers on hostile input: truncated and mutated corpus modules,
// shapes and literals, and hand-made pathological texts. Every call must
// return (a value or an error) promptly, without crashing, and every error
// must say where: "<file>:<line>:<col>: <message>".
//
// Runtime is bounded by byte budgets so the whole file stays well under a
// minute in a Release build and a few minutes under AddressSanitizer.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/test_corpus.h"

namespace kiln::hlo {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------- budgets

// Sanitized builds run the parser about ten times slower; they get a
// sixth of the big-module work (the small modules keep every cut; the
// hlo_text fuzzer takes truncations much further).
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kSlowdown = 6;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr size_t kSlowdown = 6;
#else
constexpr size_t kSlowdown = 1;
#endif
#else
constexpr size_t kSlowdown = 1;
#endif

// Modules sampled per corpus source (evenly spaced by size, smallest and
// largest included), plus the largest modules of the whole corpus.
constexpr size_t kSamplePerSource = 10;
constexpr size_t kLargestModules = 3;
// Files up to this size are cut at every byte; bigger ones at evenly spaced
// points.
constexpr size_t kEveryByteLimit = 2048;
constexpr size_t kEvenlySpacedCuts = 200;
// Big files get fewer cuts: about kTruncationBudget bytes parsed per file,
// and at least kMinCuts cuts.
constexpr size_t kTruncationBudget = (size_t{128} << 20) / kSlowdown;
constexpr size_t kMinCuts = 24 / kSlowdown;
// Mutated copies per module: kMaxMutations, fewer for big modules so that
// about kMutationBudget bytes are parsed per module.
constexpr size_t kMaxMutations = 300;
constexpr size_t kMinMutations = 12 / kSlowdown;
constexpr size_t kMutationBudget = (size_t{24} << 20) / kSlowdown;
// Any single call slower than this is a hang or a super-linear path.
constexpr double kMaxSecondsPerCall = 10.0;
constexpr uint32_t kSeed = 20240917;

// ---------------------------------------------------------------- corpus

using testing::CorpusRoot;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct CorpusFile {
  fs::path path;
  std::string source;  // folder under hlo/: "jax-dumps", ...
  uintmax_t size = 0;
};

const std::vector<CorpusFile>& AllCorpusFiles() {
  static const std::vector<CorpusFile> files = [] {
    std::vector<CorpusFile> out;
    std::error_code ec;
    fs::path dir = CorpusRoot() / "hlo";
    if (!fs::is_directory(dir, ec)) return out;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (!it->is_regular_file() || it->path().extension() != ".hlo") continue;
      out.push_back({it->path(), it->path().parent_path().filename().string(),
                     it->file_size()});
    }
    std::sort(out.begin(), out.end(),
              [](const CorpusFile& a, const CorpusFile& b) { return a.path < b.path; });
    return out;
  }();
  return files;
}

// The sample, grouped by source; deterministic.
const std::map<std::string, std::vector<CorpusFile>>& SampleBySource() {
  static const std::map<std::string, std::vector<CorpusFile>> sample = [] {
    std::map<std::string, std::vector<CorpusFile>> by_source;
    for (const CorpusFile& f : AllCorpusFiles()) by_source[f.source].push_back(f);
    auto by_size = [](const CorpusFile& a, const CorpusFile& b) {
      return a.size != b.size ? a.size < b.size : a.path < b.path;
    };
    std::set<fs::path> chosen;
    std::vector<CorpusFile> all = AllCorpusFiles();
    std::sort(all.begin(), all.end(), by_size);
    for (size_t i = 0; i < std::min(kLargestModules, all.size()); ++i) {
      chosen.insert(all[all.size() - 1 - i].path);
    }
    for (auto& [source, files] : by_source) {
      std::sort(files.begin(), files.end(), by_size);
      size_t n = std::min(kSamplePerSource, files.size());
      for (size_t k = 0; k < n; ++k) {
        size_t index = n == 1 ? 0 : k * (files.size() - 1) / (n - 1);
        chosen.insert(files[index].path);
      }
    }
    std::map<std::string, std::vector<CorpusFile>> out;
    for (const CorpusFile& f : AllCorpusFiles()) {
      if (chosen.contains(f.path)) out[f.source].push_back(f);
    }
    return out;
  }();
  return sample;
}

std::vector<std::string> SampleSources() {
  std::vector<std::string> out;
  for (const auto& [source, files] : SampleBySource()) out.push_back(source);
  // Keeps the test instantiated (and failing) when the corpus is missing.
  if (out.empty()) out.push_back("missing-corpus");
  return out;
}

// ---------------------------------------------------------------- checks

// An invalid_argument error placed in `file` at a line and column inside
// the input, with a message, rendered "<file>:<line>:<col>: <text>".
::testing::AssertionResult IsPositionedError(const Error& error, std::string_view file, std::string_view input) {
  const std::string text = error.ToString();
  auto bad = [&](std::string_view why) {
    return ::testing::AssertionFailure() << why << ": \"" << text.substr(0, 200) << "\"";
  };
  if (error.code != ErrorCode::kInvalidArgument) return bad("code " + std::string(ErrorCodeName(error.code)));
  if (error.message.empty()) return bad("empty error message");
  if (error.where().file != file) return bad("placed in \"" + error.where().file + "\", not \"" + std::string(file) + "\"");
  const int64_t lines = 1 + std::count(input.begin(), input.end(), '\n');
  if (error.where().line < 1 || error.where().line > lines) {
    return bad("line out of range (input has " + std::to_string(lines) + ")");
  }
  if (error.where().column < 1 || error.where().column > static_cast<int64_t>(input.size()) + 1) {
    return bad("column out of range");
  }
  const std::string position =
      std::string(file) + ":" + std::to_string(error.where().line) + ":" + std::to_string(error.where().column) + ": ";
  if (!text.starts_with(position)) return bad("the text does not start with \"" + position + "\"");
  return ::testing::AssertionSuccess();
}

// Runs the parsers and checks the outcome; counts calls, errors and time.
class Harness {
 public:
  void Module(std::string_view text, std::string_view file, std::string_view what) {
    auto start = Clock::now();
    Result<std::unique_ptr<hlo::Module>> m = ParseModule(text, file);
    Finish(start, what);
    if (!m) Check(m.error(), file, text, what);
  }
  void ShapeText(std::string_view text, std::string_view what) {
    auto start = Clock::now();
    Result<hlo::Shape> s = ParseShape(text);
    Finish(start, what);
    if (!s) Check(s.error(), "<shape>", text, what);
  }
  void LiteralText(std::string_view text, std::string_view what) {
    auto start = Clock::now();
    Result<hlo::Literal> l = ParseLiteral(text);
    Finish(start, what);
    if (!l) Check(l.error(), "<literal>", text, what);
  }

  int64_t calls() const { return calls_; }
  int64_t errors() const { return errors_; }
  int bad() const { return bad_; }

 private:
  void Finish(Clock::time_point start, std::string_view what) {
    ++calls_;
    double s = std::chrono::duration<double>(Clock::now() - start).count();
    if (s > kMaxSecondsPerCall && ++bad_ <= kMaxReported) {
      ADD_FAILURE() << what << ": took " << s << " s";
    }
  }
  void Check(const Error& error, std::string_view file, std::string_view input, std::string_view what) {
    ++errors_;
    ::testing::AssertionResult ok = IsPositionedError(error, file, input);
    if (!ok && ++bad_ <= kMaxReported) ADD_FAILURE() << what << ": " << ok.message();
  }

  static constexpr int kMaxReported = 20;
  int64_t calls_ = 0;
  int64_t errors_ = 0;
  int bad_ = 0;
};

// Cut points: every byte for small inputs, evenly spaced otherwise.
std::vector<size_t> CutPoints(size_t size) {
  std::vector<size_t> cuts;
  if (size <= kEveryByteLimit) {
    for (size_t i = 0; i < size; ++i) cuts.push_back(i);
    return cuts;
  }
  size_t n = std::clamp(kTruncationBudget / (size / 2), kMinCuts, kEvenlySpacedCuts);
  for (size_t k = 0; k < n; ++k) cuts.push_back(k * size / n);
  return cuts;
}

// Bytes the mutator likes to write: the HLO syntax plus a few hostile ones.
constexpr std::string_view kSyntaxBytes = "{}()[]<>,=:%\"/*?.-_x0123456789 \n\tTSEL#+~efsubp";

// One random edit: overwrite a byte (random or syntax), flip a bit, delete
// a short run, or duplicate one.
std::string Mutate(const std::string& text, std::mt19937& rng) {
  std::string out = text;
  int edits = 1 + static_cast<int>(rng() % 3 == 0);
  for (int e = 0; e < edits && !out.empty(); ++e) {
    size_t pos = rng() % out.size();
    switch (rng() % 5) {
      case 0: out[pos] = static_cast<char>(rng() & 0xff); break;
      case 1: out[pos] = kSyntaxBytes[rng() % kSyntaxBytes.size()]; break;
      case 2: out[pos] = static_cast<char>(out[pos] ^ (1 << (rng() % 8))); break;
      case 3: out.erase(pos, 1 + rng() % 8); break;
      default: out.insert(pos, 1, out[rng() % out.size()]); break;
    }
  }
  return out;
}

std::string Display(const fs::path& p) { return p.lexically_relative(CorpusRoot()).generic_string(); }

// ---------------------------------------------------------------- corpus modules

class CorpusModuleRobustnessTest : public ::testing::TestWithParam<std::string> {
 protected:
  const std::vector<CorpusFile>& Files() {
    static const std::vector<CorpusFile> none;
    auto it = SampleBySource().find(GetParam());
    return it == SampleBySource().end() ? none : it->second;
  }
};

TEST_P(CorpusModuleRobustnessTest, TruncatedModules) {
  ASSERT_FALSE(Files().empty()) << "no corpus modules under " << (CorpusRoot() / "hlo");
  Harness h;
  for (const CorpusFile& f : Files()) {
    std::string text = ReadFile(f.path);
    std::string name = Display(f.path);
    for (size_t cut : CutPoints(text.size())) {
      std::string_view prefix = std::string_view(text).substr(0, cut);
      h.Module(prefix, name, name + " cut at byte " + std::to_string(cut));
      if (h.bad() > 0) break;
    }
  }
  std::printf("[ stats    ] %s: %lld truncated modules, %lld errors\n", GetParam().c_str(),
              static_cast<long long>(h.calls()), static_cast<long long>(h.errors()));
  EXPECT_EQ(h.bad(), 0);
  EXPECT_GT(h.errors(), 0);
}

TEST_P(CorpusModuleRobustnessTest, MutatedModules) {
  ASSERT_FALSE(Files().empty()) << "no corpus modules under " << (CorpusRoot() / "hlo");
  Harness h;
  std::mt19937 rng(kSeed ^ static_cast<uint32_t>(std::hash<std::string>()(GetParam())));
  for (const CorpusFile& f : Files()) {
    std::string text = ReadFile(f.path);
    std::string name = Display(f.path);
    size_t n = std::clamp(kMutationBudget / std::max<size_t>(text.size(), 1), kMinMutations,
                          kMaxMutations);
    for (size_t i = 0; i < n; ++i) {
      std::string mutated = Mutate(text, rng);
      h.Module(mutated, name, name + " mutation " + std::to_string(i));
      if (h.bad() > 0) break;
    }
  }
  std::printf("[ stats    ] %s: %lld mutated modules, %lld errors\n", GetParam().c_str(),
              static_cast<long long>(h.calls()), static_cast<long long>(h.errors()));
  EXPECT_EQ(h.bad(), 0);
  EXPECT_GT(h.errors(), 0);
}

INSTANTIATE_TEST_SUITE_P(Sources, CorpusModuleRobustnessTest, ::testing::ValuesIn(SampleSources()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// ---------------------------------------------------------------- shapes and literals

// Shapes and literals as they appear in the corpus: instruction shapes and
// constants of the sampled modules, and the values in *.expected.txt.
struct ValueTexts {
  std::vector<std::string> shapes;
  std::vector<std::string> literals;
};

const ValueTexts& CorpusValueTexts() {
  static const ValueTexts texts = [] {
    constexpr size_t kMaxShapes = 1500;
    constexpr size_t kMaxLiterals = 600;
    constexpr size_t kMaxLiteralBytes = 4096;
    ValueTexts out;
    std::set<std::string> seen_shapes, seen_literals;
    auto add_literal = [&](std::string s) {
      if (s.size() <= kMaxLiteralBytes && out.literals.size() < kMaxLiterals &&
          seen_literals.insert(s).second) {
        out.literals.push_back(std::move(s));
      }
    };
    for (const CorpusFile& f : AllCorpusFiles()) {
      fs::path expected = f.path;
      expected.replace_extension(".expected.txt");
      std::error_code ec;
      if (!fs::exists(expected, ec)) continue;
      std::istringstream lines(ReadFile(expected));
      for (std::string line; std::getline(lines, line);) {
        if (!line.starts_with("param.") && !line.starts_with("result")) continue;
        size_t eq = line.find(" = ");
        if (eq != std::string::npos) add_literal(line.substr(eq + 3));
      }
    }
    for (const auto& [source, files] : SampleBySource()) {
      for (const CorpusFile& f : files) {
        if (f.size > (size_t{1} << 20)) continue;  // enough variety in the smaller ones
        Result<std::unique_ptr<Module>> m = ParseModule(ReadFile(f.path), "x");
        if (!m) continue;
        for (const auto& c : (*m)->computations()) {
          for (const auto& instr : c->instructions()) {
            std::string s = instr->shape().ToString();
            if (out.shapes.size() < kMaxShapes && seen_shapes.insert(s).second) {
              out.shapes.push_back(std::move(s));
            }
            if (instr->literal() != nullptr) add_literal(instr->literal()->ToString());
          }
        }
      }
    }
    return out;
  }();
  return texts;
}

TEST(ValueRobustnessTest, TruncatedAndMutatedShapes) {
  const auto& shapes = CorpusValueTexts().shapes;
  ASSERT_GE(shapes.size(), 100u) << "too few corpus shapes; is the corpus missing?";
  Harness h;
  std::mt19937 rng(kSeed + 1);
  for (const std::string& s : shapes) {
    ASSERT_TRUE(ParseShape(s).has_value()) << "printed shape does not parse: " << s;
    for (size_t cut : CutPoints(s.size())) h.ShapeText(std::string_view(s).substr(0, cut), s);
    for (int i = 0; i < 40; ++i) h.ShapeText(Mutate(s, rng), s);
    if (h.bad() > 0) break;
  }
  EXPECT_EQ(h.bad(), 0);
  EXPECT_GT(h.errors(), 0);
}

TEST(ValueRobustnessTest, TruncatedAndMutatedLiterals) {
  const auto& literals = CorpusValueTexts().literals;
  ASSERT_GE(literals.size(), 50u) << "too few corpus literals; is the corpus missing?";
  Harness h;
  std::mt19937 rng(kSeed + 2);
  for (const std::string& s : literals) {
    for (size_t cut : CutPoints(s.size())) h.LiteralText(std::string_view(s).substr(0, cut), s);
    for (int i = 0; i < 60; ++i) h.LiteralText(Mutate(s, rng), s);
    if (h.bad() > 0) break;
  }
  EXPECT_EQ(h.bad(), 0);
  EXPECT_GT(h.errors(), 0);
}

// ---------------------------------------------------------------- handcrafted

std::string Repeat(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

std::string Entry(std::string_view body) {
  return "HloModule m\n\nENTRY e {\n" + std::string(body) + "\n}\n";
}

// Each input must fail with a positioned error, quickly.
void ExpectModuleError(std::string_view text, std::string_view what) {
  auto start = Clock::now();
  Result<std::unique_ptr<Module>> m = ParseModule(text, "nasty.hlo");
  double s = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_LT(s, kMaxSecondsPerCall) << what;
  ASSERT_FALSE(m.has_value()) << what << " parsed";
  EXPECT_TRUE(IsPositionedError(m.error(), "nasty.hlo", text)) << what;
}

void ExpectShapeError(std::string_view text, std::string_view what) {
  auto start = Clock::now();
  Result<Shape> r = ParseShape(text);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), kMaxSecondsPerCall) << what;
  ASSERT_FALSE(r.has_value()) << what << " parsed";
  EXPECT_TRUE(IsPositionedError(r.error(), "<shape>", text)) << what;
}

void ExpectLiteralError(std::string_view text, std::string_view what) {
  auto start = Clock::now();
  Result<Literal> r = ParseLiteral(text);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), kMaxSecondsPerCall) << what;
  ASSERT_FALSE(r.has_value()) << what << " parsed";
  EXPECT_TRUE(IsPositionedError(r.error(), "<literal>", text)) << what;
}

TEST(NastyInputTest, DeeplyNestedTuples) {
  constexpr size_t kDepth = 100000;
  std::string nested = std::string(kDepth, '(') + "f32[]" + std::string(kDepth, ')');
  ExpectShapeError(nested, "100k-deep tuple shape");
  ExpectLiteralError(nested + " 1", "100k-deep tuple literal shape");
  ExpectLiteralError(std::string(kDepth, '(') + "f32[] 1" + std::string(kDepth, ')'),
                     "100k-deep tuple literal");
  ExpectModuleError(Entry("  ROOT p = " + nested + " parameter(0)"), "100k-deep parameter shape");
  ExpectModuleError("HloModule m, entry_computation_layout={(" + nested + ")->f32[]}\n",
                    "100k-deep entry layout");
  ExpectModuleError(Entry("  ROOT c = (((f32[]))) constant(" + std::string(kDepth, '(') + "1" +
                          std::string(kDepth, ')') + ")"),
                    "100k-deep tuple constant");
  ExpectModuleError(Entry("  p = f32[] parameter(0)\n  ROOT r = f32[] " +
                          Repeat("negate(", kDepth) + "p" + std::string(kDepth, ')')),
                    "100k-deep nested instructions");
  ExpectModuleError(Entry("  ROOT r = f32[] " + Repeat("negate(f32[] ", kDepth) + "parameter(0)" +
                          std::string(kDepth, ')')),
                    "100k-deep typed nested instructions");

  // 64 levels is allowed and must still work.
  std::string ok = std::string(40, '(') + "f32[]" + std::string(40, ')');
  Result<Shape> shape = ParseShape(ok);
  ASSERT_TRUE(shape.has_value()) << shape.error().ToString();
  EXPECT_EQ(shape->ToString(), ok);
}

TEST(NastyInputTest, HugeDimensions) {
  ExpectShapeError("f32[99999999999999999999]", "dimension beyond int64");
  ExpectShapeError("f32[-9223372036854775808]", "negative dimension");
  ExpectShapeError("f32[1]{99999999999999999999}", "layout beyond int64");
  ExpectModuleError(Entry("  ROOT p = f32[99999999999999999999] parameter(0)"), "parameter dim");
  ExpectModuleError(Entry("  ROOT c = f32[4294967296,4294967296] constant(0)"),
                    "64 GiB splat constant");
  ExpectModuleError(Entry("  ROOT c = f32[9223372036854775807,9223372036854775807] constant(0)"),
                    "overflowing splat constant");
  ExpectModuleError(Entry("  ROOT c = f32[4294967296,4294967296] constant({1})"),
                    "dense constant of a huge shape");
  ExpectLiteralError("f32[4294967296,4294967296] {1}", "dense literal of an overflowing shape");
  ExpectLiteralError("s8[4294967296] {1, 2}", "dense literal of a huge shape");
  ExpectLiteralError("f32[9223372036854775807,2] 1", "scalar for a huge shape");

  // Shapes alone never allocate: huge but representable shapes are fine.
  Result<Shape> big = ParseShape("f32[9223372036854775807,9223372036854775807]");
  ASSERT_TRUE(big.has_value()) << big.error().ToString();
  EXPECT_EQ(big->ElementCount(), -1);
  Result<std::unique_ptr<Module>> param =
      ParseModule(Entry("  ROOT p = f32[4294967296,4294967296] parameter(0)"), "big.hlo");
  EXPECT_TRUE(param.has_value()) << param.error().ToString();
}

TEST(NastyInputTest, UnterminatedStringsAndComments) {
  for (std::string_view text : {
           "HloModule m, frontend_attributes={a=\"b}",
           "HloModule m, backend_config=\"abc",
           "HloModule m /* never closed",
           "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), metadata={op_name=\"x}\n}\n",
           "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), custom_call_target=\"x\n}\n",
           "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0) /* comment\n}\n",
           "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}, execution_thread=\"main",
           "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), backend_config=\"\\\"",
           "\"",
           "/*",
           "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), backend_config={\"}\"",
       }) {
    ExpectModuleError(text, text);
  }
  ExpectShapeError("f32[2]{0:D(\"x)}", "string in a layout");
  ExpectLiteralError("f32[] /* 1", "comment in a literal");
}

TEST(NastyInputTest, NulBytes) {
  using namespace std::string_literals;
  ExpectModuleError("\0"s, "single NUL");
  ExpectModuleError(std::string(1 << 20, '\0'), "1 MiB of NUL");
  ExpectModuleError("HloModule m\0"s, "NUL after the name");
  ExpectModuleError("HloModule m\nENTRY e {\n  ROOT p = f32[\0] parameter(0)\n}\n"s,
                    "NUL in a shape");
  ExpectModuleError("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n\0"s,
                    "NUL at the end");
  ExpectShapeError("f32[2]\0"s, "NUL after a shape");
  ExpectLiteralError("f32[2] {1,\0 2}"s, "NUL in a literal");
  // Inside a string a NUL is just a byte: any outcome, but no crash.
  std::string in_string = Entry("  ROOT p = f32[] parameter(0), metadata={op_name=\"a\0b\"}"s);
  Result<std::unique_ptr<Module>> m = ParseModule(in_string, "nul.hlo");
  if (!m) {
    EXPECT_TRUE(IsPositionedError(m.error(), "nul.hlo", in_string));
  }
}

TEST(NastyInputTest, TenMegabytesOfBrackets) {
  constexpr size_t kSize = size_t{10} << 20;
  for (char c : {'{', '(', '['}) {
    std::string run(kSize, c);
    std::string what = std::string("10 MB of ") + c;
    ExpectModuleError(run, what);
    ExpectShapeError(run, what + " as a shape");
    ExpectLiteralError(run, what + " as a literal");
    ExpectModuleError("HloModule m, backend_config=" + run, what + " in a raw header attribute");
    ExpectModuleError("HloModule m, some_attr=" + run, what + " in a header attribute");
    ExpectModuleError(Entry("  ROOT p = f32[] parameter(0), sharding=" + run), what + " in an attribute");
    ExpectModuleError(Entry("  ROOT p = f32[] parameter(0), metadata=" + run), what + " in metadata");
    ExpectModuleError(Entry("  ROOT c = f32[2] constant(" + run), what + " in a constant");
    ExpectModuleError("HloModule m\nENTRY e " + run, what + " as a computation body");
  }
  ExpectModuleError(Entry("  ROOT p = f32[] parameter(0), sharding={" + Repeat("{}", kSize / 2)),
                    "10 MB of {} pairs");
  ExpectLiteralError("f32[2] " + Repeat("{", kSize), "10 MB of { in a literal");
  ExpectModuleError(Entry("  ROOT p = f32[" + Repeat("1,", kSize / 2) + "] parameter(0)"),
                    "5M dimensions");
  ExpectModuleError(Entry("  ROOT p = f32[] parameter(" + std::string(kSize, '9') + ")"),
                    "10 MB number");
  ExpectModuleError(Entry("  ROOT " + std::string(kSize, 'a')), "10 MB identifier");
}

TEST(NastyInputTest, EmptyAndHeaderOnly) {
  for (std::string_view text : {"", " ", "\n\n\n", "// only a comment", "/* c */", "HloModule",
                                "HloModule m", "HloModule m\n", "HloModule m, is_scheduled=true",
                                "HloModule m, entry_computation_layout={()->f32[]}",
                                "HloModule m,", "HloModule m\nENTRY", "HloModule m\nENTRY e",
                                "HloModule m\nENTRY e {", "HloModule m\nENTRY e {}", "ENTRY e {}"}) {
    ExpectModuleError(text, text.empty() ? "empty input" : text);
  }
  ExpectShapeError("", "empty shape");
  ExpectLiteralError("", "empty literal");
  ExpectLiteralError("f32[2]", "literal without a value");
}

// Instructions written without a shape get one from shape inference once
// the module is read; when that fails the error still says where.
TEST(NastyInputTest, ShapeInferenceErrorsArePositioned) {
  for (std::string_view body : {
           "  ROOT p = parameter(0)",
           "  p = f32[2,3] parameter(0)\n  ROOT r = reshape(p)",
           "  p = f32[2] parameter(0)\n  q = f32[3] parameter(1)\n  ROOT r = add(p, q)",
           "  p = (f32[2]) parameter(0)\n  ROOT g = get-tuple-element(p), index=7",
           "  p = f32[2] parameter(0)\n  ROOT d = dot(p, p), lhs_contracting_dims={0}",
       }) {
    ExpectModuleError(Entry(body), body);
  }
}

// A value used by many instructions (hostile input arrives over HTTP) parses
// with every use recorded. That the time grows linearly with the number of
// users is measured by bench/parse_fingerprint_bench.cc's scaling section.
TEST(NastyInputTest, AValueWithManyUsersParsesWithEveryUseRecorded) {
  constexpr int kUsers = 80000;
  std::string text = "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n";
  for (int i = 0; i < kUsers; ++i) text += "  n" + std::to_string(i) + " = f32[] negate(p)\n";
  text += "  ROOT r = f32[] negate(p)\n}\n";
  Result<std::unique_ptr<Module>> m = ParseModule(text, "users.hlo");
  ASSERT_TRUE(m.has_value()) << m.error().ToString();
  const Instruction* p = (*m)->entry()->parameters().at(0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->users().size(), static_cast<size_t>(kUsers + 1));
}

}  // namespace
}  // namespace kiln::hlo
