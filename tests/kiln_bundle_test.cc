// `kiln inspect export` and `kiln inspect import` end to end: a store
// filled by `kiln tune --db` and `kiln prewarm --db` moves whole into an
// empty one; a second import adds nothing; a damaged or foreign bundle is
// refused with exit 1 and leaves the target store as it was.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <xxhash.h>

#include "base/version.h"
#include "base/zstd_testing.h"
#include "tests/run_kiln.h"
#include "tests/tunable_module.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using kiln::testing::RunKiln;
using kiln::testing::RunResult;

const fs::path kCorpusFiles = fs::path(KILN_CORPUS_DIR) / "hlo" / "xla-hlo-files";

class KilnBundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_bundle_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "hlo");
    std::ofstream(dir_ / "tunable.hlo") << kiln::testing::kTunableModule;
    for (const char* name : {"hlo__builder__tests__math_acos__part1.hlo", "hlo__builder__tests__math_acos__part4.hlo"}) {
      fs::copy_file(kCorpusFiles / name, dir_ / "hlo" / name);
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // A source store with a tuned entry, its tuning records and two
  // prewarmed entries; returns its path.
  std::string FilledSource() {
    const std::string db = Path("source.db");
    RunResult tune = RunKiln("tune " + Path("tunable.hlo") + " --trials 4 --seed 3 --db " + db);
    EXPECT_EQ(tune.exit_code, 0) << tune.err;
    RunResult prewarm = RunKiln("prewarm " + Path("hlo") + " --jobs 1 --db " + db);
    EXPECT_EQ(prewarm.exit_code, 0) << prewarm.err;
    return db;
  }

  // What a store holds, as `inspect list/tuning-records --json` show it,
  // without the figures that belong to one store (hits, record ids).
  json Contents(const std::string& db) {
    RunResult list = RunKiln("inspect list --json --limit 10000 --db " + db);
    EXPECT_EQ(list.exit_code, 0) << list.err;
    RunResult records = RunKiln("inspect tuning-records --json --limit 10000 --db " + db);
    EXPECT_EQ(records.exit_code, 0) << records.err;
    json entries = json::parse(list.out, nullptr, false);
    json tuning = json::parse(records.out, nullptr, false);
    for (json& e : entries) {
      e.erase("hits");
      e.erase("last_hit");
      e.erase("stored_bytes");  // compression depends on the store's dictionary
    }
    for (json& r : tuning) r.erase("id");
    return {{"entries", entries}, {"records", tuning}};
  }

  std::string Export(const std::string& db, const std::string& extra = "") {
    const std::string bundle = Path("cache.kbundle");
    RunResult out = RunKiln("inspect export " + bundle + " --db " + db + " " + extra);
    EXPECT_EQ(out.exit_code, 0) << out.err;
    return bundle;
  }

  std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  std::string WriteFile(const std::string& name, const std::string& bytes) {
    std::ofstream(Path(name), std::ios::binary) << bytes;
    return Path(name);
  }

  // Importing `bundle` into a store already holding a copy of the source
  // and into no store at all is refused (exit 1, `reason` in the message)
  // and changes neither.
  void ExpectRefused(const std::string& bundle, const std::string& reason) {
    const std::string target = Path("target.db");
    const json before = Contents(target);
    RunResult refused = RunKiln("inspect import " + bundle + " --db " + target);
    EXPECT_EQ(refused.exit_code, 1) << refused.out;
    EXPECT_NE(refused.err.find("nothing imported"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find(reason), std::string::npos) << refused.err;
    EXPECT_EQ(Contents(target), before);
    RunResult fresh = RunKiln("inspect import " + bundle + " --db " + Path("fresh.db"));
    EXPECT_EQ(fresh.exit_code, 1);
    EXPECT_FALSE(fs::exists(Path("fresh.db")));
  }

  fs::path dir_;
};

// Entries keep their HLO text through a bundle, the tuned one `kiln tune
// --db` stored into an empty store too (it was put without): a store that
// imported the bundle explains a miss against it instruction by instruction.
TEST_F(KilnBundleTest, AnImportedTunedEntryExplainsAMissInstructionByInstruction) {
  const std::string bundle = Export(FilledSource());
  const std::string target = Path("target.db");
  RunResult imported = RunKiln("inspect import " + bundle + " --db " + target);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  std::string changed = kiln::testing::kTunableModule;
  changed.replace(changed.find("sine(x)"), 7, "cosine(x)");
  RunResult explained = RunKiln("inspect explain " + WriteFile("tunable_changed.hlo", changed) + " --db " + target +
                                " --json");
  ASSERT_EQ(explained.exit_code, 0) << explained.err;
  const json answer = json::parse(explained.out, nullptr, false);
  ASSERT_TRUE(answer.is_object()) << explained.out;
  EXPECT_EQ(answer.value("cached_text_kept", false), true) << explained.out;
  ASSERT_TRUE(answer["changes"].is_array() && !answer["changes"].empty()) << explained.out;
  EXPECT_EQ(answer["changes"][0]["instruction"], "s") << explained.out;
}

TEST_F(KilnBundleTest, ImportIntoAnEmptyStoreReproducesTheSource) {
  const std::string source = FilledSource();
  const json contents = Contents(source);
  ASSERT_EQ(contents["entries"].size(), 3u) << contents.dump();
  ASSERT_FALSE(contents["records"].empty());
  const std::string bundle = Export(source);
  EXPECT_FALSE(fs::exists(bundle + ".tmp-" + std::to_string(getpid())));

  const std::string target = Path("target.db");
  RunResult imported = RunKiln("inspect import " + bundle + " --db " + target);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("entries: imported 3, already present 0, conflicts 0"), std::string::npos)
      << imported.out;
  RunResult verify = RunKiln("inspect verify --db " + target);
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("3 ok"), std::string::npos) << verify.out;
  EXPECT_EQ(Contents(target), contents);

  RunResult again = RunKiln("inspect import " + bundle + " --json --db " + target);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const json counts = json::parse(again.out, nullptr, false);
  EXPECT_EQ(counts["imported"]["entries"], 0) << again.out;
  EXPECT_EQ(counts["imported"]["records"], 0) << again.out;
  EXPECT_EQ(counts["already_present"]["entries"], 3) << again.out;
  EXPECT_EQ(counts["already_present"]["records"], contents["records"].size()) << again.out;
  EXPECT_EQ(Contents(target), contents);
}

TEST_F(KilnBundleTest, ExportSelectsByKeyAndTime) {
  const std::string source = FilledSource();
  const json contents = Contents(source);
  const std::string key = contents["entries"][0]["key"];
  const std::string bundle = Export(source, "--keys " + key + " --since 2000-01-01");
  RunResult imported = RunKiln("inspect import " + bundle + " --db " + Path("one.db"));
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const json one = Contents(Path("one.db"));
  ASSERT_EQ(one["entries"].size(), 1u);
  EXPECT_EQ(one["entries"][0]["key"], key);

  Export(source, "--since 2999-01-01");
  RunResult none = RunKiln("inspect import " + bundle + " --json --db " + Path("none.db"));
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(json::parse(none.out, nullptr, false)["imported"]["entries"], 0) << none.out;
}

TEST_F(KilnBundleTest, ExportFromAMissingStoreCreatesNothing) {
  RunResult missing = RunKiln("inspect export " + Path("b.kbundle") + " --db " + Path("typo.db"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no cache database"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(Path("typo.db")));
  EXPECT_FALSE(fs::exists(Path("b.kbundle")));
}

TEST_F(KilnBundleTest, FailedExportLeavesNothingBehind) {
  const std::string source = FilledSource();
  const std::string taken = Path("taken");
  fs::create_directories(taken);
  // A folder stands where the bundle should go: the export fails at the
  // rename and leaves the folder as it was and no temporary file.
  RunResult failed = RunKiln("inspect export " + taken + " --db " + source);
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_NE(failed.err.find("cannot rename"), std::string::npos) << failed.err;
  EXPECT_TRUE(fs::is_empty(taken));
  for (const auto& file : fs::directory_iterator(dir_)) {
    EXPECT_EQ(file.path().filename().string().find(".tmp-"), std::string::npos) << file.path();
  }
  RunResult nowhere = RunKiln("inspect export " + Path("missing/b.kbundle") + " --db " + source);
  EXPECT_EQ(nowhere.exit_code, 1);
  EXPECT_NE(nowhere.err.find("cannot create"), std::string::npos) << nowhere.err;
}

TEST_F(KilnBundleTest, DamagedOrForeignBundlesAreRefusedAndChangeNothing) {
  const std::string source = FilledSource();
  const std::string bytes = ReadFile(Export(source));
  ASSERT_GT(bytes.size(), 100u);
  // The target holds one entry of the source already.
  const std::string key = Contents(source)["entries"][0]["key"];
  const std::string partial = Export(source, "--keys " + key);
  ASSERT_EQ(RunKiln("inspect import " + partial + " --db " + Path("target.db")).exit_code, 0);

  ExpectRefused(WriteFile("truncated.kbundle", bytes.substr(0, bytes.size() * 2 / 3)), "truncated");
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x04;
  ExpectRefused(WriteFile("flipped.kbundle", flipped), "checksum mismatch");
  std::string foreign = bytes;
  foreign[8] = 9;  // the bundle format version
  ExpectRefused(WriteFile("foreign.kbundle", foreign), "format version 9, this kiln reads 1 to 2");
  std::string newer_compiler = bytes;
  const int newer = static_cast<int>(kiln::kCompilerFormatVersion) + 1;
  newer_compiler[12] = static_cast<char>(newer);  // the compiler format version
  ExpectRefused(WriteFile("compiler.kbundle", newer_compiler), "compiler format " + std::to_string(newer));
  ExpectRefused(WriteFile("junk.kbundle", "not a bundle at all"), "not a kiln bundle");
}

// The bytes of a one-entry bundle whose entry claims `claimed_raw` bytes
// of executable and holds `frame` (bundle.h's layout, written by hand: no
// kiln writer makes a claim its frame does not hold).
std::string ClaimingBundle(uint64_t claimed_raw, const std::string& frame) {
  auto put = [](std::string& out, auto value) { out.append(reinterpret_cast<const char*>(&value), sizeof(value)); };
  auto put_string = [&](std::string& out, std::string_view text) {
    put(out, static_cast<uint32_t>(text.size()));
    out.append(text);
  };
  std::string bundle = "KILNBNDL";
  put(bundle, uint32_t{1});
  put(bundle, static_cast<uint32_t>(kiln::kCompilerFormatVersion));
  put(bundle, uint32_t{1});
  std::string entry;
  put_string(entry, "default");
  put_string(entry, "0123456789abcdef0123456789abcdef");
  put_string(entry, "v5e");
  put(entry, static_cast<uint32_t>(kiln::kCompilerFormatVersion));
  put_string(entry, "{}");
  put_string(entry, "heuristic");
  put(entry, 0.5);
  put(entry, 0.001);
  put(entry, int64_t{1'764'547'200'000});
  put(entry, uint32_t{0});  // components
  put(entry, uint32_t{0});  // request hashes
  put(entry, claimed_raw);
  put(entry, uint64_t{42});  // checksum (never reached)
  put_string(entry, frame);
  auto framed = [&](uint8_t kind, const std::string& payload) {
    bundle.push_back(static_cast<char>(kind));
    put(bundle, static_cast<uint64_t>(payload.size()));
    bundle += payload;
    const uint64_t checksum = XXH3_64bits(payload.data(), payload.size());
    put(bundle, checksum);
    return checksum;
  };
  const uint64_t entry_checksum = framed(1, entry);
  std::string manifest;
  put(manifest, uint64_t{1});
  put(manifest, uint64_t{0});
  put(manifest, entry_checksum);
  framed(3, manifest);
  return bundle;
}

// 40 KB of noise zstd-compressed as a stream: the frame does not record its
// size, so only decoding says it holds 40 KB.
std::string StreamedNoiseFrame() {
  std::string raw(40'000, '\0');
  uint64_t state = 88172645463325252ULL;
  for (char& c : raw) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    c = static_cast<char>(state);
  }
  return kiln::testing::StreamedZstdFrame(raw);
}

// Found by a hostile probe: a 131 KB bundle made `inspect import` allocate
// the 4 GiB its entry claimed, and abort under a memory limit. Run here
// under a 600 MB address-space limit (ulimit -v): a claim is refused, or
// costs what the frame really holds, and the import exits 1.
TEST_F(KilnBundleTest, ABundleClaimingHugeExecutablesIsRefusedInLittleMemory) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: ulimit -v cannot bound it";
#endif
  const std::string frame = StreamedNoiseFrame();
  ASSERT_GT(frame.size(), (uint64_t{1} << 30) / 32768) << "the frame must look big enough for its claim";
  const std::vector<std::pair<uint64_t, std::string>> claims = {
      {(uint64_t{1} << 30) - 1, "decompressed to 40000 bytes"},   // within the limit: decoded, found short
      {(uint64_t{4} << 30) - 1, "bytes"},                           // past the limit: refused unread
  };
  for (const auto& [claim, reason] : claims) {
    const std::string bundle = WriteFile("claim.kbundle", ClaimingBundle(claim, frame));
    RunResult refused = RunKiln("inspect import " + bundle + " --db " + Path("bomb.db"), "ulimit -v 600000; ");
    EXPECT_EQ(refused.exit_code, 1) << claim << ": " << refused.err;
    EXPECT_NE(refused.err.find("nothing imported"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find(reason), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(Path("bomb.db")));
  }
}

}  // namespace
