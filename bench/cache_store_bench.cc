// kiln_cache_bench: cache store latency/throughput and zstd compression.
//
//   kiln_cache_bench [--small N] [--large N] [--gets N] [--blobs DIR]
//
// Part 1 fills a fresh store with --small (1k) and --large (100k) entries
// and measures put throughput, put latency, and hit latency from SQLite
// (hot set off) and from the hot set; the small store is the baseline and
// the target is large/small hit p50 <= 1.2.
// Part 2 compresses every file under --blobs (default: the corpus .hlo
// files, standing in for executables until `kiln compile` writes them) at
// several zstd levels, without and with a dictionary trained on 80% of the
// files and measured on the other 20%. Never fails on timing.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cache/cache_store.h"
#include "cache/zstd_codec.h"

namespace kiln::cache {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

struct Percentiles {
  double p50_us = 0;
  double p99_us = 0;
};

Percentiles Summarize(std::vector<double> micros) {
  if (micros.empty()) return {};
  std::sort(micros.begin(), micros.end());
  return {micros[micros.size() / 2], micros[std::min(micros.size() - 1, micros.size() * 99 / 100)]};
}

EntryId BenchId(uint64_t i) { return EntryId{"bench", Hash128{i * 0x9e3779b97f4a7c15ULL, i}, "v5e", 1}; }

// ~2 KiB, half structure shared by all executables, half entry-specific.
std::string BenchExecutable(uint64_t i) {
  std::string bytes;
  for (int k = 0; bytes.size() < 2048; ++k) {
    bytes += "kernel." + std::to_string(k) + ".fusion;tile=128x128;";
    bytes += std::to_string((i * 2654435761u + k * 40503u) % 1000003) + ";";
  }
  return bytes;
}

PutRequest BenchPut(uint64_t i, std::string_view executable) {
  PutRequest put;
  put.id = BenchId(i);
  put.options = "o";
  put.executable = executable;
  put.compile_seconds = 30;
  return put;
}

struct StoreFigures {
  uint64_t entries = 0;
  double fill_puts_per_s = 0;
  Percentiles put;
  Percentiles disk_hit;
  Percentiles memory_hit;
  Percentiles miss;
  double disk_gets_per_s = 0;
};

Result<std::unique_ptr<CacheStore>> OpenFresh(const std::string& path, uint64_t hot_set_bytes) {
  CacheStoreOptions options;
  options.path = path;
  options.hot_set_bytes = hot_set_bytes;
  return CacheStore::Open(std::move(options));
}

std::string BenchPath(const std::string& dir, uint64_t entries) {
  return dir + "/kiln-cache-bench-" + std::to_string(entries) + ".db";
}

void RemoveDatabase(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// Fills a fresh store, then times 1000 more puts.
Status FillStore(const std::string& path, StoreFigures& figures) {
  RemoveDatabase(path);
  KILN_ASSIGN_OR_RETURN(auto store, OpenFresh(path, 0));
  const auto start = Clock::now();
  for (uint64_t i = 0; i < figures.entries; ++i) {
    const std::string executable = BenchExecutable(i);
    KILN_RETURN_IF_ERROR(store->Put(BenchPut(i, executable)));
  }
  figures.fill_puts_per_s = static_cast<double>(figures.entries) / Seconds(Clock::now() - start);
  std::vector<double> put_us;
  for (uint64_t i = figures.entries; i < figures.entries + 1000; ++i) {
    const std::string executable = BenchExecutable(i);
    const PutRequest put = BenchPut(i, executable);
    const auto t0 = Clock::now();
    KILN_RETURN_IF_ERROR(store->Put(put));
    put_us.push_back(Seconds(Clock::now() - t0) * 1e6);
  }
  figures.put = Summarize(std::move(put_us));
  return Ok();
}

// One open store being timed, with its samples.
struct Timed {
  std::unique_ptr<CacheStore> store;
  StoreFigures* figures;
  std::vector<uint64_t> keys;  // what the hits ask for
  std::vector<double> hit_us;
  std::vector<double> miss_us;
  Clock::duration hit_time{};
};

// Times `gets` hits (and a quarter as many misses) on each store, in
// alternating rounds so background load on the machine hits both alike.
Status TimeHits(std::vector<Timed>& stores, int gets, bool expect_memory) {
  constexpr int kRound = 500;
  for (int done = 0; done < gets; done += kRound) {
    for (Timed& timed : stores) {
      const auto round_start = Clock::now();
      for (int g = done; g < done + kRound; ++g) {
        const auto t0 = Clock::now();
        KILN_ASSIGN_OR_RETURN(auto hit, timed.store->Get(BenchId(timed.keys[g % timed.keys.size()])));
        timed.hit_us.push_back(Seconds(Clock::now() - t0) * 1e6);
        if (!hit || hit->from_memory != expect_memory) return InternalError("bench: unexpected kind of hit");
      }
      timed.hit_time += Clock::now() - round_start;
      if (expect_memory) continue;
      for (int g = done; g < done + kRound / 4; ++g) {
        const auto t0 = Clock::now();
        KILN_ASSIGN_OR_RETURN(auto miss, timed.store->Get(BenchId(timed.figures->entries + 2000 + g)));
        timed.miss_us.push_back(Seconds(Clock::now() - t0) * 1e6);
        if (miss) return InternalError("bench: unexpected hit");
      }
    }
  }
  return Ok();
}

Status MeasureStores(const std::string& dir, std::vector<StoreFigures>& all, int gets) {
  for (StoreFigures& figures : all) KILN_RETURN_IF_ERROR(FillStore(BenchPath(dir, figures.entries), figures));
  for (bool memory : {false, true}) {
    std::vector<Timed> stores;
    for (StoreFigures& figures : all) {
      // Hot set off: every hit reads, decompresses and verifies from SQLite.
      KILN_ASSIGN_OR_RETURN(auto store, OpenFresh(BenchPath(dir, figures.entries), memory ? 64 << 20 : 0));
      Timed timed{std::move(store), &figures, {}, {}, {}, {}};
      std::mt19937_64 random(42);
      std::uniform_int_distribution<uint64_t> pick(0, figures.entries - 1);
      // Uniform over the store from disk; a 1000-entry working set warmed
      // into the hot set for memory hits.
      for (int k = 0; k < (memory ? 1000 : gets); ++k) timed.keys.push_back(pick(random));
      if (memory) {
        for (uint64_t key : timed.keys) KILN_RETURN_IF_ERROR(timed.store->Get(BenchId(key)));
      }
      stores.push_back(std::move(timed));
    }
    KILN_RETURN_IF_ERROR(TimeHits(stores, gets, memory));
    for (Timed& timed : stores) {
      if (memory) {
        timed.figures->memory_hit = Summarize(std::move(timed.hit_us));
      } else {
        timed.figures->disk_hit = Summarize(std::move(timed.hit_us));
        timed.figures->miss = Summarize(std::move(timed.miss_us));
        timed.figures->disk_gets_per_s = gets / Seconds(timed.hit_time);
      }
    }
  }
  for (const StoreFigures& figures : all) RemoveDatabase(BenchPath(dir, figures.entries));
  return Ok();
}

void PrintStore(const StoreFigures& f) {
  std::printf("  %7llu entries: fill %8.0f puts/s | put p50 %6.1f us p99 %7.1f us | "
              "disk hit p50 %6.1f us p99 %7.1f us (%7.0f gets/s) | hot hit p50 %5.2f us | miss p50 %5.1f us\n",
              static_cast<unsigned long long>(f.entries), f.fill_puts_per_s, f.put.p50_us, f.put.p99_us,
              f.disk_hit.p50_us, f.disk_hit.p99_us, f.disk_gets_per_s, f.memory_hit.p50_us, f.miss.p50_us);
}

std::vector<std::string> ReadBlobs(const std::string& dir) {
  std::vector<std::string> blobs;
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() != ".tsv" && entry.path().extension() != ".md") {
      paths.push_back(entry.path());
    }
  }
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    std::ifstream in(path, std::ios::binary);
    blobs.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return blobs;
}

struct CodecFigures {
  uint64_t raw = 0;
  uint64_t compressed = 0;
  double compress_mb_s = 0;
  double decompress_mb_s = 0;
};

Result<CodecFigures> MeasureCodec(const std::vector<const std::string*>& blobs, int level,
                                  const ZstdDictionary* dictionary) {
  CodecFigures figures;
  std::vector<std::string> frames;
  frames.reserve(blobs.size());
  auto start = Clock::now();
  for (const std::string* blob : blobs) {
    KILN_ASSIGN_OR_RETURN(std::string frame, ZstdCompress(*blob, level, dictionary));
    figures.raw += blob->size();
    figures.compressed += frame.size();
    frames.push_back(std::move(frame));
  }
  figures.compress_mb_s = figures.raw / 1e6 / Seconds(Clock::now() - start);
  start = Clock::now();
  for (size_t i = 0; i < frames.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(std::string raw, ZstdDecompress(frames[i], blobs[i]->size(), dictionary));
    if (raw.size() != blobs[i]->size()) return InternalError("bench: round trip changed the size");
  }
  figures.decompress_mb_s = figures.raw / 1e6 / Seconds(Clock::now() - start);
  return figures;
}

Status RunCompression(const std::string& dir) {
  const std::vector<std::string> blobs = ReadBlobs(dir);
  if (blobs.empty()) return InternalError("bench: no files under " + dir);
  std::vector<const std::string*> all;
  std::vector<std::string> training;
  std::vector<const std::string*> holdout;
  for (size_t i = 0; i < blobs.size(); ++i) {
    all.push_back(&blobs[i]);
    if (i % 5 == 4) {
      holdout.push_back(&blobs[i]);
    } else {
      training.push_back(blobs[i]);
    }
  }
  uint64_t total = 0;
  for (const std::string& blob : blobs) total += blob.size();
  std::printf("\nCompression over %zu files, %.1f MB under %s\n", blobs.size(), total / 1e6, dir.c_str());
  if (dir.ends_with(".hlo") || dir.find("corpus") != std::string::npos) {
    std::printf("(input: HLO text; for executables, write them with `kiln compile FILE --out` "
                "and pass --blobs DIR)\n");
  }
  std::printf("  level | all files: ratio  comp MB/s  decomp MB/s | held-out 20%%: ratio plain  ratio dict  "
              "dict gain  dict comp MB/s\n");
  KILN_ASSIGN_OR_RETURN(std::string trained, TrainZstdDictionary(training, 110 * 1024));
  for (int level : {1, 3, 6, 9, 15, 19}) {
    KILN_ASSIGN_OR_RETURN(auto dictionary, ZstdDictionary::Create(trained, level));
    KILN_ASSIGN_OR_RETURN(CodecFigures whole, MeasureCodec(all, level, nullptr));
    KILN_ASSIGN_OR_RETURN(CodecFigures plain, MeasureCodec(holdout, level, nullptr));
    KILN_ASSIGN_OR_RETURN(CodecFigures with, MeasureCodec(holdout, level, dictionary.get()));
    std::printf("  %5d | %16.2f  %9.1f  %11.1f | %18.2f  %10.2f  %8.1f%%  %14.1f\n", level,
                static_cast<double>(whole.raw) / whole.compressed, whole.compress_mb_s, whole.decompress_mb_s,
                static_cast<double>(plain.raw) / plain.compressed, static_cast<double>(with.raw) / with.compressed,
                100.0 * (1.0 - static_cast<double>(with.compressed) / plain.compressed), with.compress_mb_s);
  }
  std::printf("  default level: %d (cache/zstd_codec.h)\n", kDefaultZstdLevel);
  return Ok();
}

}  // namespace
}  // namespace kiln::cache

int main(int argc, char** argv) {
  CLI::App app{"kiln_cache_bench: cache store latency and zstd compression"};
  uint64_t small = 1000;
  uint64_t large = 100'000;
  int gets = 20'000;
  std::string blobs = KILN_CORPUS_DIR "/hlo";
  std::string dir = std::filesystem::temp_directory_path().string();
  bool skip_store = false;
  app.add_option("--small", small, "entries in the baseline store");
  app.add_option("--large", large, "entries in the large store");
  app.add_option("--gets", gets, "timed gets per store");
  app.add_option("--blobs", blobs, "directory of blobs to compress");
  app.add_option("--dir", dir, "where to put the benchmark databases");
  app.add_flag("--skip-store", skip_store, "only measure compression");
  CLI11_PARSE(app, argc, argv);

  if (!skip_store) {
    std::printf("Cache store (2 KiB executables, zstd level %d, one thread)\n", kiln::cache::kDefaultZstdLevel);
    std::vector<kiln::cache::StoreFigures> figures(2);
    figures[0].entries = small;
    figures[1].entries = large;
    if (auto status = kiln::cache::MeasureStores(dir, figures, gets); !status) {
      std::fprintf(stderr, "%s\n", status.error().ToString().c_str());
      return 1;
    }
    for (const auto& f : figures) kiln::cache::PrintStore(f);
    const kiln::cache::StoreFigures* baseline = &figures[0];
    const kiln::cache::StoreFigures* big = &figures[1];
    const double disk_ratio = big->disk_hit.p50_us / baseline->disk_hit.p50_us;
    const double hot_ratio = big->memory_hit.p50_us / baseline->memory_hit.p50_us;
    std::printf("  hit p50 ratio %llu/%llu entries: disk %.2fx, hot set %.2fx (target <= 1.2x): %s\n",
                static_cast<unsigned long long>(large), static_cast<unsigned long long>(small), disk_ratio,
                hot_ratio, disk_ratio <= 1.2 && hot_ratio <= 1.2 ? "met" : "NOT met");
  }
  if (auto status = kiln::cache::RunCompression(blobs); !status) {
    std::fprintf(stderr, "%s\n", status.error().ToString().c_str());
    return 1;
  }
  return 0;
}
