// kiln inspect {list|show|verify|evict|stats|explain|recompiles|tuning-records|export|import}: look into a cache
// database without a server (the server may be running: SQLite's WAL lets
// readers and one writer share the file). Every command prints a readable
// table, or one JSON document with --json (an error too). Only import
// creates a store; the others fail on a missing one.
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <nlohmann/json.hpp>

#include "cache/cache_store.h"
#include "runtime/chip/chip_spec.h"
#include "server/service/entry_json.h"
#include "tools/commands.h"
#include "tools/inspect_bundle.h"
#include "tools/inspect_explain.h"
#include "tools/inspect_recompiles.h"
#include "tools/inspect_where.h"
#include "tools/json_error.h"
#include "tools/store_open.h"

namespace kiln::tools {
namespace {

struct InspectArgs {
  std::string db;  // empty: ResolveDbPath's default
  // Empty: every tenant (list, stats, records, explain), or whichever one
  // holds the key (show, evict: refused naming them when several do).
  std::string tenant;
  std::string chip;  // show, evict: empty for whichever chip holds the key; explain: empty for v5e
  std::string plan = "heuristic";
  std::string key;
  std::string file;
  std::string workload;       // tuning-records: empty for every subgraph
  std::string record_chip;    // tuning-records: empty for every chip
  std::string sort = "id";    // list: id, hits, saved, bytes or age
  std::string module_name;    // recompiles: empty for every name
  std::string shared;         // show: the shared tier's URL; empty: KILN_SHARED, else local only
  int min_keys = 2;           // recompiles
  int limit = 100;
  bool json = false;
};

// --tenant narrows a command only when given.
std::optional<std::string> TenantFilter(const InspectArgs& args) {
  if (args.tenant.empty()) return std::nullopt;
  return args.tenant;
}

cache::ListOrder ListOrderNamed(const std::string& name) {
  if (name == "hits") return cache::ListOrder::kHits;
  if (name == "saved") return cache::ListOrder::kSaved;
  if (name == "bytes") return cache::ListOrder::kBytes;
  if (name == "age") return cache::ListOrder::kAge;
  return cache::ListOrder::kRowId;
}

Result<std::unique_ptr<cache::CacheStore>> OpenStore(const InspectArgs& args) {
  return OpenToolStore(args.db, StoreAccess::kLookOnly);
}

// The entry args.key names: under --tenant and --chip when given, else in
// whichever tenant and chip hold it (a key copied from `list`, which shows
// every tenant's, is found). Several matches are refused, naming them.
Result<cache::EntryId> FindEntry(cache::CacheStore& store, const InspectArgs& args) {
  KILN_ASSIGN_OR_RETURN(hlo::Hash128 key, cache::ParseHash128(args.key));
  if (!args.tenant.empty() && !args.chip.empty()) {
    return cache::EntryId{args.tenant, key, args.chip, kCompilerFormatVersion};
  }
  cache::ListFilter filter{.tenant = TenantFilter(args), .key_prefix = key.Hex(), .limit = 64};
  if (!args.chip.empty()) filter.chip = args.chip;
  KILN_ASSIGN_OR_RETURN(std::vector<cache::EntryMetadata> found, store.List(filter));
  std::erase_if(found, [&](const cache::EntryMetadata& m) { return m.id.key != key; });
  if (found.empty()) {
    return NotFoundError("no entry " + key.Hex() + (args.tenant.empty() ? " in any tenant" : " of tenant " + args.tenant) +
                         (args.chip.empty() ? "" : " for " + args.chip));
  }
  if (found.size() > 1) {
    std::string where;
    for (const cache::EntryMetadata& m : found) where += (where.empty() ? "" : ", ") + m.id.tenant + "/" + m.id.chip;
    return InvalidArgumentError("key " + key.Hex() + " names " + std::to_string(found.size()) + " entries (" + where +
                                "); say which with --tenant and --chip");
  }
  return found.front().id;
}


// The one JSON of an entry, the API's (server/service/entry_json.h).
nlohmann::json EntryJson(const cache::EntryMetadata& m) { return service::EntryToJson(m); }

// Whether this process printed its JSON document already (a command may
// print its report and still fail, as verify does on corruption).
bool json_printed = false;

void PrintJson(const nlohmann::json& value) {
  json_printed = true;
  std::printf("%s\n", value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

Status List(const InspectArgs& args) {
  KILN_ASSIGN_OR_RETURN(auto store, OpenStore(args));
  cache::ListFilter filter;
  filter.tenant = TenantFilter(args);
  filter.limit = args.limit;
  filter.order = ListOrderNamed(args.sort);
  KILN_ASSIGN_OR_RETURN(auto entries, store->List(filter));
  if (args.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& m : entries) out.push_back(EntryJson(m));
    PrintJson(out);
    return Ok();
  }
  std::printf("%-32s  %-8s %-5s %-9s %10s %10s %6s  %s\n", "key", "tenant", "chip", "plan", "bytes",
              "compile_ms", "hits", "last hit");
  for (const auto& m : entries) {
    std::printf("%-32s  %-8s %-5s %-9s %10llu %10.1f %6lld  %s%s\n", m.id.key.Hex().c_str(),
                m.id.tenant.c_str(), m.id.chip.c_str(),
                std::string(cache::PlanKindName(m.plan_kind)).c_str(),
                static_cast<unsigned long long>(m.stored_bytes), m.compile_seconds * 1e3,
                static_cast<long long>(m.hit_count), m.hit_count > 0 ? service::Rfc3339(m.last_hit_ms).c_str() : "never",
                m.quarantined ? "  QUARANTINED" : "");
  }
  return Ok();
}

// show: the entry in the local store and, with --shared (or KILN_SHARED),
// in the shared tier too; absent from both is NotFound.
Status Show(const InspectArgs& args) {
  KILN_ASSIGN_OR_RETURN(auto store, OpenStore(args));
  std::string shared_url = args.shared;
  if (const char* env = std::getenv("KILN_SHARED"); shared_url.empty() && env != nullptr) shared_url = env;
  Result<cache::EntryId> found = FindEntry(*store, args);
  if (!found && found.error().code == ErrorCode::kNotFound && !shared_url.empty()) {
    // Not stored here: look for it in the shared tier, under the tenant and
    // chip given (or default's, on v5e, as a server without --auth-file).
    KILN_ASSIGN_OR_RETURN(hlo::Hash128 key, cache::ParseHash128(args.key));
    found = cache::EntryId{args.tenant.empty() ? std::string("default") : args.tenant, key,
                           args.chip.empty() ? std::string(kDefaultChip) : args.chip, kCompilerFormatVersion};
  }
  if (!found) return std::unexpected(found.error());
  const cache::EntryId id = *found;
  KILN_ASSIGN_OR_RETURN(auto meta, store->GetMetadata(id));
  std::optional<nlohmann::json> shared;
  if (!shared_url.empty()) {
    Result<nlohmann::json> presence = SharedPresence(shared_url, id);
    if (!presence) return presence.error().WithContext("looking into the shared tier");
    shared = *presence;
  }
  if (!meta && !(shared && (*shared)["present"].get<bool>())) {
    return NotFoundError("no entry " + id.ToString() + (shared ? " here or in the shared tier" : ""));
  }
  nlohmann::json out = meta ? EntryJson(*meta) : nlohmann::json{{"key", id.key.Hex()}, {"tenant", id.tenant}, {"chip", id.chip}};
  std::vector<cache::KeyComponent> components;
  if (meta) {
    KILN_ASSIGN_OR_RETURN(components, store->Components(id));
    for (const auto& c : components) out["components"][c.name] = c.hash.Hex();
    KILN_ASSIGN_OR_RETURN(std::optional<std::string> source, store->Source(id));
    out["source_bytes"] = source ? nlohmann::json(source->size()) : nlohmann::json(nullptr);
  }
  out["local"] = meta.has_value();
  if (shared) out["shared"] = *shared;
  if (args.json) {
    PrintJson(out);
    return Ok();
  }
  for (const auto& [name, value] : out.items()) {
    if (name == "components") continue;
    std::printf("%-16s %s\n", name.c_str(), value.is_string() ? value.get<std::string>().c_str() : value.dump().c_str());
  }
  if (meta) {
    std::printf("key components:\n");
    for (const auto& c : components) std::printf("  %-22s %s\n", c.name.c_str(), c.hash.Hex().c_str());
  }
  return Ok();
}

Status Verify(const InspectArgs& args) {
  KILN_ASSIGN_OR_RETURN(auto store, OpenStore(args));
  KILN_ASSIGN_OR_RETURN(cache::VerifyReport report, store->VerifyAll());
  const bool corrupt = !report.newly_quarantined.empty() || report.integrity_check != "ok";
  if (args.json) {
    nlohmann::json out = {{"checked", report.checked},
                          {"ok", report.ok},
                          {"already_quarantined", report.already_quarantined},
                          {"newly_quarantined", nlohmann::json::array()},
                          {"integrity_check", report.integrity_check},
                          {"healthy", !corrupt}};
    for (const auto& m : report.newly_quarantined) out["newly_quarantined"].push_back(EntryJson(m));
    PrintJson(out);
  } else {
    std::printf("checked %lld entries: %lld ok, %lld already quarantined, %zu newly quarantined; "
              "integrity_check: %s\n",
              static_cast<long long>(report.checked), static_cast<long long>(report.ok),
              static_cast<long long>(report.already_quarantined), report.newly_quarantined.size(),
              report.integrity_check.c_str());
    for (const auto& m : report.newly_quarantined) std::printf("  corrupt: %s\n", m.id.ToString().c_str());
  }
  if (corrupt) {
    return DataLossError("the database holds corrupt entries (quarantined: never served)");
  }
  return Ok();
}

Status Evict(const InspectArgs& args) {
  KILN_ASSIGN_OR_RETURN(auto store, OpenStore(args));
  KILN_ASSIGN_OR_RETURN(cache::EntryId id, FindEntry(*store, args));
  KILN_ASSIGN_OR_RETURN(bool evicted, store->Evict(id));
  if (!evicted) return NotFoundError("no entry " + id.ToString());
  if (args.json) {
    PrintJson({{"evicted", true}, {"key", id.key.Hex()}, {"tenant", id.tenant}, {"chip", id.chip}});
  } else {
    std::printf("evicted %s\n", id.ToString().c_str());
  }
  return Ok();
}

Status Stats(const InspectArgs& args) {
  KILN_ASSIGN_OR_RETURN(auto store, OpenStore(args));
  KILN_ASSIGN_OR_RETURN(cache::StoreStats s, store->Stats());
  const std::optional<std::string> tenant = TenantFilter(args);
  KILN_ASSIGN_OR_RETURN(cache::EntrySummary sum, store->Summarize({.tenant = tenant}));
  if (args.json) {
    nlohmann::json out = {{"entries", sum.entries},
                          {"quarantined_entries", sum.quarantined_entries},
                          {"raw_bytes", sum.raw_bytes},
                          {"stored_bytes", sum.stored_bytes},
                          {"hits", sum.hits},
                          {"compile_seconds_saved", sum.compile_seconds_saved},
                          {"file_bytes", s.file_bytes},
                          {"free_bytes", s.free_bytes},
                          {"dictionary_id", s.dictionary_id},
                          {"quarantined_total", s.quarantined_total},
                          {"evicted_total", s.evicted_total}};
    if (tenant) out["tenant"] = *tenant;
    PrintJson(out);
    return Ok();
  }
  std::printf("%-22s %s\n", "tenant", tenant ? tenant->c_str() : "(every tenant)");
  std::printf("%-22s %lld (%lld quarantined)\n", "entries", static_cast<long long>(sum.entries),
              static_cast<long long>(sum.quarantined_entries));
  std::printf("%-22s %llu raw, %llu stored\n", "bytes", static_cast<unsigned long long>(sum.raw_bytes),
              static_cast<unsigned long long>(sum.stored_bytes));
  std::printf("%-22s %lld\n", "hits", static_cast<long long>(sum.hits));
  std::printf("%-22s %.1f\n", "compile seconds saved", sum.compile_seconds_saved);
  std::printf("%-22s %llu (%llu free)\n", "file bytes", static_cast<unsigned long long>(s.file_bytes),
              static_cast<unsigned long long>(s.free_bytes));
  std::printf("%-22s %u\n", "zstd dictionary", s.dictionary_id);
  std::printf("%-22s %lld quarantined, %lld evicted\n", "over the file's life",
              static_cast<long long>(s.quarantined_total), static_cast<long long>(s.evicted_total));
  return Ok();
}

// Why would this file miss? (inspect_explain.h)
Status Explain(const InspectArgs& args) {
  KILN_ASSIGN_OR_RETURN(auto store, OpenStore(args));
  return ExplainFile(*store, {.file = args.file, .tenant = args.tenant,
                              .chip = args.chip.empty() ? std::string(kDefaultChip) : args.chip, .plan = args.plan,
                              .json = args.json});
}

// Module names compiled as several programs (inspect_recompiles.h).
Status Recompiles(const InspectArgs& args) {
  KILN_ASSIGN_OR_RETURN(auto store, OpenStore(args));
  RecompilesArgs recompiles{.tenant = TenantFilter(args), .min_keys = args.min_keys, .json = args.json};
  if (!args.module_name.empty()) recompiles.name = args.module_name;
  return PrintRecompiles(*store, recompiles);
}

nlohmann::json RecordJson(const cache::TuningRecord& r) {
  nlohmann::json out = {{"id", r.id},
                        {"tenant", r.tenant},
                        {"workload_key", r.workload_key},
                        {"chip", r.chip},
                        {"compiler_version", r.compiler_version},
                        {"plan", r.plan},
                        {"created", service::Rfc3339(r.created_ms)}};
  if (r.measured_seconds) out["measured_us"] = *r.measured_seconds * 1e6;
  if (r.error) out["error"] = *r.error;
  return out;
}

// Tuning records, newest first; compiler version 0 marks records from
// before records were scoped (never reused).
Status TuningRecords(const InspectArgs& args) {
  KILN_ASSIGN_OR_RETURN(auto store, OpenStore(args));
  cache::TuningRecordFilter filter;
  if (!args.tenant.empty()) filter.tenant = args.tenant;
  if (!args.workload.empty()) filter.workload_key = args.workload;
  if (!args.record_chip.empty()) filter.chip = args.record_chip;
  filter.limit = args.limit;
  KILN_ASSIGN_OR_RETURN(auto records, store->tuning_records().List(filter));
  if (args.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : records) out.push_back(RecordJson(r));
    PrintJson(out);
    return Ok();
  }
  std::printf("%-8s %-32s  %-5s %3s %12s  %-20s  %s\n", "tenant", "workload", "chip", "ver", "measured_us",
              "created", "plan or error");
  for (const auto& r : records) {
    char measured[32] = "-";
    if (r.measured_seconds) std::snprintf(measured, sizeof measured, "%.1f", *r.measured_seconds * 1e6);
    const std::string what = r.error ? "error: " + *r.error : r.plan;
    std::printf("%-8s %-32s  %-5s %3u %12s  %-20s  %s\n", r.tenant.empty() ? "-" : r.tenant.c_str(),
                r.workload_key.c_str(), r.chip.c_str(), r.compiler_version, measured, service::Rfc3339(r.created_ms).c_str(),
                what.c_str());
  }
  return Ok();
}

void AddStoreOptions(CLI::App* cmd, InspectArgs& args) {
  AddDbOption(cmd, &args.db, "Cache database");
  cmd->add_option("--tenant", args.tenant, "Tenant of the entry (default: whichever holds the key)");
  cmd->add_flag("--json", args.json, "Print JSON");
}

// list and stats: every tenant unless --tenant is given.
void AddFilteredStoreOptions(CLI::App* cmd, InspectArgs& args) {
  AddDbOption(cmd, &args.db, "Cache database");
  cmd->add_option("--tenant", args.tenant, "Only this tenant's entries (default: every tenant's)");
  cmd->add_flag("--json", args.json, "Print JSON");
}

void AddKeyOptions(CLI::App* cmd, InspectArgs& args) {
  cmd->add_option("key", args.key, "Entry key (32 hex digits)")->required();
  cmd->add_option("--chip", args.chip, "Chip of the entry (default: whichever holds the key)")
      ->check(CLI::IsMember(runtime::ChipNames(), CLI::ignore_case));
}

// A subcommand callback: runs `fn` on the parsed arguments and reports a
// failure on stderr with exit code 1 (and, with --json, as the JSON
// document {"error": ...} on stdout unless `fn` printed one).
template <typename Args>
std::function<void()> Runner(std::shared_ptr<Args> args, int* exit_code, Status (*fn)(const Args&),
                             std::function<void(Args&)> before = nullptr) {
  return [args, exit_code, fn, before] {
    if (before) before(*args);
    if (Status s = fn(*args); !s) {
      std::fprintf(stderr, "kiln inspect: %s\n", s.error().ToString().c_str());
      *exit_code = 1;
      if (args->json && !json_printed) PrintJson({{"error", ErrorJson(s.error())}});
    }
  };
}

// export FILE / import FILE (inspect_bundle.h). `parent`: the options
// given before the command name (`kiln inspect --db x.db export F`).
void RegisterBundleCommands(CLI::App* cmd, int* exit_code, std::shared_ptr<const InspectArgs> parent) {
  auto args = std::make_shared<BundleArgs>();
  auto inherit = [parent](BundleArgs& own) {
    if (own.db.empty()) own.db = parent->db;
    if (own.tenant.empty()) own.tenant = parent->tenant;
    own.json = own.json || parent->json;
  };
  auto run = [args, exit_code, inherit](Status (*fn)(const BundleArgs&)) {
    return Runner<BundleArgs>(args, exit_code, fn, inherit);
  };
  auto* out = cmd->add_subcommand("export", "Write entries and tuning records to one bundle file");
  out->add_option("file", args->file, "Bundle to write (replaced whole, never left half written)")->required();
  AddDbOption(out, &args->db, "Cache database");
  out->add_option("--keys", args->keys, "Only these entry keys (32 hex digits each)");
  out->add_option("--chip", args->chip, "Only entries and records for this chip")
      ->check(CLI::IsMember(runtime::ChipNames(), CLI::ignore_case));
  out->add_option("--since", args->since, "Only what was created since (YYYY-MM-DD[THH:MM:SSZ] or Unix seconds)");
  out->add_option("--tenant", args->tenant, "Only this tenant's entries and records (default: every tenant's)");
  out->add_flag("--json", args->json, "Print JSON");
  out->callback(run(ExportBundleFile));
  auto* in = cmd->add_subcommand("import", "Check a bundle whole, then add what the store lacks");
  in->add_option("file", args->file, "Bundle to read")->required();
  AddDbOption(in, &args->db, "Cache database, created when absent");
  in->add_option("--tenant", args->tenant, "File every entry and record under this tenant (default: the bundle's)");
  in->add_flag("--json", args->json, "Print JSON");
  in->callback(run(ImportBundleFile));
}

}  // namespace

void RegisterInspect(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("inspect", "List, show, verify, evict and explain cache entries; list tuning records; export and import bundles");
  cmd->require_subcommand(1);
  auto args = std::make_shared<InspectArgs>();
  // Options every inspect command takes, also before the command's name
  // (`kiln inspect --db x.db list`).
  AddDbOption(cmd, &args->db, "Cache database (for every command below)");
  cmd->add_option("--tenant", args->tenant, "Tenant (for every command below; default: every tenant's)");
  cmd->add_flag("--json", args->json, "Print JSON (for every command below)");
  auto run = [args, exit_code](Status (*fn)(const InspectArgs&)) { return Runner(args, exit_code, fn); };
  auto* list = cmd->add_subcommand("list", "List entries");
  AddFilteredStoreOptions(list, *args);
  list->add_option("--limit", args->limit, "At most this many entries");
  list->add_option("--sort", args->sort, "Order: id (default), hits, saved (compile seconds), bytes or age (oldest first)")
      ->check(CLI::IsMember({"id", "hits", "saved", "bytes", "age"}));
  list->callback(run(List));
  auto* show = cmd->add_subcommand("show", "Show one entry, its key components and where it lives");
  AddStoreOptions(show, *args);
  AddKeyOptions(show, *args);
  show->add_option("--shared", args->shared,
                   "Also look in this shared tier (redis://...; as `kiln serve --shared`) [KILN_SHARED]");
  show->callback(run(Show));
  auto* verify = cmd->add_subcommand("verify", "Check every entry's checksum; quarantine bad ones");
  AddStoreOptions(verify, *args);
  verify->callback(run(Verify));
  auto* evict = cmd->add_subcommand("evict", "Remove one entry");
  AddStoreOptions(evict, *args);
  AddKeyOptions(evict, *args);
  evict->callback(run(Evict));
  auto* stats = cmd->add_subcommand("stats", "Store totals: entries, bytes, hits, compile seconds saved");
  AddFilteredStoreOptions(stats, *args);
  stats->callback(run(Stats));
  auto* explain = cmd->add_subcommand("explain", "Would FILE hit? If not, what differs from the nearest entry");
  AddStoreOptions(explain, *args);
  explain->add_option("file", args->file, "HLO text file")->required();
  explain->add_option("--chip", args->chip, "Target chip")
      ->check(CLI::IsMember(runtime::ChipNames(), CLI::ignore_case));
  explain->add_option("--plan", args->plan, "Fusion plan")
      ->check(CLI::IsMember({"none", "heuristic", "given"}));
  explain->callback(run(Explain));
  auto* recompiles = cmd->add_subcommand("recompiles", "Module names compiled as several programs, and what changed");
  AddFilteredStoreOptions(recompiles, *args);
  recompiles->add_option("--name", args->module_name, "Only this module name");
  recompiles->add_option("--min-keys", args->min_keys, "Only names compiled as at least this many programs (default 2)")
      ->check(CLI::Range(2, 100000));
  recompiles->callback(run(Recompiles));
  auto* records = cmd->add_subcommand("tuning-records", "List autotuning records, newest first");
  AddDbOption(records, &args->db, "Cache database");
  records->add_option("--tenant", args->tenant, "Only this tenant's records (default: every tenant's)");
  records->add_option("--workload", args->workload, "Only records of this kernel subgraph key");
  records->add_option("--chip", args->record_chip, "Only records for this chip (default: every chip)")
      ->check(CLI::IsMember(runtime::ChipNames(), CLI::ignore_case));
  records->add_option("--limit", args->limit, "At most this many records");
  records->add_flag("--json", args->json, "Print JSON");
  records->callback(run(TuningRecords));
  RegisterBundleCommands(cmd, exit_code, args);
}

}  // namespace kiln::tools
