// kiln_fuzz_seeds OUT_DIR CORPUS_DIR: writes seed inputs for the harnesses
// whose inputs are binary or built from other values (scripts/fuzz.sh
// copies the text seeds itself). From the small modules of the corpus
// that compile: their executables (executable_fuzzer's payload and raw
// modes), their zstd blobs with and without the fuzz dictionary
// (store_blob_fuzzer), random inputs as safetensors, JSON and literal
// files; and HTTP requests on every route (both HTTP harnesses) around the
// executable of one small module, whose key they name.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/bundle.h"
#include "cache/zstd_codec.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "compiler/driver/compile_module.h"
#include "fuzz/fuzz_dictionary.h"
#include "runtime/io/random_inputs.h"
#include "runtime/io/safetensors.h"
#include "server/http/content_coding.h"
#include "server/api/json_tensors.h"

namespace {

using namespace kiln;
namespace fs = std::filesystem;

constexpr uintmax_t kMaxModuleBytes = 4096;
constexpr size_t kMaxModules = 48;
constexpr int64_t kMaxInputBytes = 16 << 10;

constexpr std::string_view kAuth = "Authorization: Bearer fuzz-token\r\n";
constexpr std::string_view kAddModule =
    "HloModule add, entry_computation_layout={(f32[2,3]{1,0}, f32[2,3]{1,0})->f32[2,3]{1,0}}\n\n"
    "ENTRY main {\n  x = f32[2,3]{1,0} parameter(0)\n  y = f32[2,3]{1,0} parameter(1)\n"
    "  ROOT sum = f32[2,3]{1,0} add(x, y)\n}\n";

void Write(const fs::path& path, std::string_view bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Request(std::string_view method, std::string_view target, std::string_view body = {},
                    std::string_view headers = {}) {
  std::string out = std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: kiln\r\n" +
                    std::string(kAuth) + std::string(headers);
  if (!body.empty() || method == "POST") out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  return out + "\r\n" + std::string(body);
}

std::string Chunked(std::string_view method, std::string_view target, std::string_view body,
                    std::string_view headers) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx", body.size());
  return std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: kiln\r\n" +
         std::string(kAuth) + std::string(headers) + "Transfer-Encoding: chunked\r\n\r\n" + size +
         "\r\n" + std::string(body) + "\r\n0\r\n\r\n";
}

// Safetensors names: parameter i is "i", element j of a tuple parameter "i.j".
void AddTensors(runtime::io::SafetensorsFile& file, const hlo::Literal& value, const std::string& name) {
  if (value.shape().IsTuple()) {
    for (size_t j = 0; j < value.tuple_elements().size(); ++j) {
      AddTensors(file, value.tuple_elements()[j], name + "." + std::to_string(j));
    }
    return;
  }
  file.tensors.push_back({name, value});
}

struct Compiled {
  std::string name;
  std::vector<uint8_t> executable;
  std::vector<hlo::Shape> parameters;
};

std::optional<Compiled> CompileFile(const fs::path& path) {
  std::string text = Read(path);
  auto module = hlo::ParseModule(text, path.string());
  if (!module || !hlo::VerifyModule(**module)) return std::nullopt;
  std::vector<hlo::Shape> parameters;
  for (const hlo::Instruction* p : (*module)->entry()->parameters()) parameters.push_back(p->shape());
  auto compiled = driver::CompileModule(**module, driver::CompileOptions{});
  if (!compiled) return std::nullopt;
  return Compiled{path.stem().string(), std::move(compiled->executable), std::move(parameters)};
}

// A bundle of the module's executable (two tenants) and a tuning record.
void WriteBundleSeed(const fs::path& out, const Compiled& c) {
  cache::Bundle bundle;
  bundle.schema_version = cache::CurrentSchemaVersion();
  for (const char* tenant : {"default", "alice"}) {
    cache::BundleEntry entry;
    entry.metadata.id = {tenant, hlo::Hash128{c.executable.size(), 7}, "v5e"};
    entry.metadata.options = R"({"options":{"plan":"heuristic"},"kernels":1})";
    entry.metadata.compile_seconds = 0.25;
    entry.metadata.device_seconds = 1e-5;
    entry.metadata.created_ms = 1'700'000'000'000;
    entry.components = {{"entry body", {1, 2}}, {"target", {3, 4}}};
    entry.request_hashes = {hlo::Hash128{5, 6}};
    entry.executable.assign(c.executable.begin(), c.executable.end());
    bundle.entries.push_back(std::move(entry));
  }
  bundle.records.push_back({.tenant = "alice", .workload_key = "00112233445566778899aabbccddeeff", .chip = "v5e",
                            .plan = "tile=128x128", .measured_seconds = 2e-5, .created_ms = 1'700'000'000'000});
  auto encoded = cache::EncodeBundle(bundle);
  if (!encoded) return;
  Write(out / "bundle" / c.name, *encoded);
  // What Redis answers the shared tier's look-up (EXISTS, GET) with the
  // bundle stored.
  Write(out / "redis_reply" / c.name, ":1\r\n$" + std::to_string(encoded->size()) + "\r\n" + *encoded + "\r\n");
}

// Redis answers without an entry: a miss, errors, a nested array, a
// reply cut short.
void WriteRedisSeeds(const fs::path& out) {
  Write(out / "redis_reply" / "miss", ":0\r\n$-1\r\n");
  Write(out / "redis_reply" / "errors", "-ERR unknown command\r\n-LOADING Redis is loading the dataset\r\n");
  Write(out / "redis_reply" / "array", "*2\r\n:1\r\n+OK\r\n*-1\r\n");
  Write(out / "redis_reply" / "short", ":1\r\n$100\r\nabc");
}

void WriteModuleSeeds(const fs::path& out, const Compiled& c, const cache::ZstdDictionary* dictionary) {
  std::string_view bytes(reinterpret_cast<const char*>(c.executable.data()), c.executable.size());
  Write(out / "executable" / (c.name + ".payload"), "\x00" + std::string(bytes.substr(32)));
  Write(out / "executable" / (c.name + ".raw"), "\x01" + std::string(bytes));
  auto blob_seed = [&](uint8_t flags, const cache::ZstdDictionary* dict, std::string_view suffix) {
    auto frame = cache::ZstdCompress(bytes, cache::kDefaultZstdLevel, dict);
    if (!frame) return;
    std::string seed(1, static_cast<char>(flags));
    for (int shift = 0; shift < 32; shift += 8) seed += static_cast<char>((bytes.size() >> shift) & 0xff);
    Write(out / "store_blob" / (c.name + std::string(suffix)), seed + *frame);
  };
  blob_seed(0, nullptr, ".plain");
  if (dictionary != nullptr) blob_seed(1, dictionary, ".dict");
  WriteBundleSeed(out, c);

  int64_t input_bytes = 0;
  for (const hlo::Shape& shape : c.parameters) input_bytes += shape.IsArray() ? shape.ByteSize() : kMaxInputBytes;
  if (input_bytes > kMaxInputBytes) return;
  auto args = runtime::io::RandomArguments(c.parameters, 1);
  if (!args) return;
  runtime::io::SafetensorsFile file;
  std::string literals;
  nlohmann::json inputs = nlohmann::json::array();
  bool json_ok = true;
  std::vector<hlo::Shape> tuple;
  for (size_t i = 0; i < args->size(); ++i) {
    AddTensors(file, (*args)[i], std::to_string(i));
    literals += "param." + std::to_string(i) + " = " + (*args)[i].ToString() + "\n";
    auto json = api::LiteralToJson((*args)[i]);
    json_ok = json_ok && json.has_value();
    if (json) inputs.push_back(*json);
  }
  if (auto st = runtime::io::SerializeSafetensors(file)) Write(out / "safetensors" / c.name, *st);
  Write(out / "literal_file" / (c.name + ".txt"), literals + "compare = near\n");
  if (json_ok && !c.parameters.empty()) {
    std::string shape = hlo::Shape::Tuple(c.parameters).ToString();
    Write(out / "json_tensors" / c.name, shape + "\n" + nlohmann::json{{"inputs", inputs}}.dump());
  }
}

void WriteHttpSeeds(const fs::path& out, const std::string& key) {
  const std::string hlo(kAddModule);
  const std::string exe = "/v1/executables/" + key;
  const std::string json_inputs =
      R"({"inputs": [{"shape": [2, 3], "dtype": "f32", "data": [1, 2, 3, 4, 5, 6]},)"
      R"( {"shape": [2, 3], "dtype": "f32", "data": [1, "nan", "inf", "-inf", 0.5, -2]}]})";
  const std::string compile_json = nlohmann::json{{"hlo", hlo}, {"chip", "v6e"}, {"options", {{"plan", "none"}}}}.dump();
  std::vector<std::pair<std::string, std::string>> seeds = {
      {"compile_text", Request("POST", "/v1/compile", hlo, "Content-Type: text/plain\r\n")},
      {"compile_query", Request("POST", "/v1/compile?chip=v6e&plan=given&scoped_vmem_bytes=1048576&return=executable", hlo)},
      {"compile_json", Request("POST", "/v1/compile", compile_json, "Content-Type: application/json\r\n")},
      {"compile_zstd", Request("POST", "/v1/compile", http::ZstdCompress(hlo, 3),
                               "Content-Type: text/plain\r\nContent-Encoding: zstd\r\nAccept-Encoding: zstd\r\n")},
      {"compile_chunked", Chunked("POST", "/v1/compile?plan=none", hlo, "Content-Type: text/plain\r\n")},
      {"compile_continue", Request("POST", "/v1/compile", hlo, "Expect: 100-continue\r\n")},
      {"explain", Request("POST", "/v1/explain?chip=v5e", hlo, "Content-Type: application/x-www-form-urlencoded\r\n")},
      {"get", Request("GET", exe, {}, "Accept-Encoding: gzip, zstd;q=0.5\r\n")},
      {"head", Request("HEAD", exe)},
      {"delete", Request("DELETE", exe)},
      {"execute_json", Request("POST", exe + "/execute?timeout=500ms", json_inputs, "Content-Type: application/json\r\n")},
      {"execute_timeout_header", Request("POST", exe + "/execute", json_inputs,
                                         "Content-Type: application/json\r\nX-Kiln-Timeout: 2s\r\n")},
      {"tune", Request("POST", "/v1/tune", "{}", "Content-Type: application/json\r\n")},
      {"tune_get", Request("GET", "/v1/tune/1")},
      {"stats", Request("GET", "/v1/stats", {}, "X-Kiln-Namespace: shared\r\n")},
      {"entries", Request("GET", "/v1/entries?chip=v5e&plan=heuristic&sort=hits&limit=2&cursor=abc%20d")},
      {"pool", Request("GET", "/v1/pool")},
      {"metrics", Request("GET", "/metrics")},
      {"healthz", Request("GET", "/healthz", {}, "Connection: close\r\n")},
      {"pipelined", Request("GET", "/healthz") + Request("GET", exe) + Request("GET", "/v1/stats")},
      {"http10", "GET /healthz HTTP/1.0\r\n\r\n"},
  };
  // An execute with safetensors inputs.
  runtime::io::SafetensorsFile file;
  for (int i = 0; i < 2; ++i) {
    auto literal = runtime::io::RandomLiteral(*hlo::ParseShape("f32[2,3]"), i);
    if (literal) file.tensors.push_back({std::to_string(i), std::move(*literal)});
  }
  if (auto st = runtime::io::SerializeSafetensors(file)) {
    seeds.emplace_back("execute_safetensors",
                       Request("POST", exe + "/execute", *st, "Content-Type: application/vnd.safetensors\r\n"));
    Write(out / "safetensors" / "add_inputs", *st);
  }
  for (const auto& [name, bytes] : seeds) {
    Write(out / "http" / name, bytes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path corpus = argv[2];
  auto dictionary = fuzz::TrainedFuzzDictionary();
  if (dictionary == nullptr) {
    std::fprintf(stderr, "kiln_fuzz_seeds: could not train the fuzz dictionary\n");
    return 1;
  }

  std::vector<fs::path> small;
  if (fs::is_directory(corpus)) {
    for (const auto& entry : fs::recursive_directory_iterator(corpus)) {
      if (entry.is_regular_file() && entry.path().extension() == ".hlo" && entry.file_size() <= kMaxModuleBytes) {
        small.push_back(entry.path());
      }
    }
  }
  std::sort(small.begin(), small.end());
  size_t written = 0;
  for (const fs::path& path : small) {
    if (written == kMaxModules) break;
    if (auto compiled = CompileFile(path)) {
      WriteModuleSeeds(out, *compiled, dictionary.get());
      ++written;
    }
  }

  auto add = hlo::ParseModule(kAddModule);
  if (!add) return 1;
  auto compiled = driver::CompileModule(**add, driver::CompileOptions{});
  if (!compiled) {
    std::fprintf(stderr, "kiln_fuzz_seeds: %s\n", compiled.error().message.c_str());
    return 1;
  }
  WriteModuleSeeds(out, Compiled{"add", compiled->executable, {*hlo::ParseShape("f32[2,3]"), *hlo::ParseShape("f32[2,3]")}},
                   dictionary.get());
  WriteHttpSeeds(out, compiled->fingerprint.key.Hex());
  WriteRedisSeeds(out);
  std::printf("kiln_fuzz_seeds: %zu corpus modules compiled into seeds under %s\n", written + 1, out.c_str());
  return 0;
}
