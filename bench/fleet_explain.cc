// Measure 5: explain with an instruction diff on entries a server did not
// compile. Server A compiles a small module and a tunable one and tunes the
// latter (the tuned replacement is published); B gets the small module's
// entry from Redis, C (which never saw either) the tuned replacement. Then
// POST /v1/explain of each module with one constant changed, on the server
// that fetched it, must name that constant in its instruction changes; and
// so must `kiln inspect explain` on a store that imported a bundle
// `kiln inspect export` wrote from A's store, and from C's. A key-only tune
// request needs the text too (hlo_required without it). One server's
// figure: the same on A, which compiled both.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "bench/fleet_measures.h"
#include "bench/fleet_modules.h"
#include "bench/fleet_processes.h"

namespace kiln::bench {
namespace {

namespace fs = std::filesystem;

bool NamesInstruction(const nlohmann::json& answer, const std::string& name) {
  if (!answer.is_object() || !answer.contains("changes") || !answer["changes"].is_array()) return false;
  for (const nlohmann::json& change : answer["changes"]) {
    if (change.is_object() && change.value("instruction", "") == name) return true;
  }
  return false;
}

std::string YesNo(bool yes) { return yes ? "yes" : "no"; }

bool ExplainNames(uint16_t port, const std::string& module, const std::string& name) {
  return NamesInstruction(Request(port, "POST", "/v1/explain", module, kTextBody).body, name);
}

// `kiln inspect explain FILE --db DB --json` names `name`.
bool CliExplainNames(const fs::path& file, const std::string& db, const std::string& name) {
  const testing::RunResult ran = testing::RunKiln("inspect explain " + file.string() + " --db " + db + " --json");
  return ran.exit_code == 0 && NamesInstruction(nlohmann::json::parse(ran.out, nullptr, false), name);
}

// `db` exported to a bundle and imported into a new store; its path, or ""
// when either step failed.
std::string ImportedCopy(const std::string& db, const fs::path& dir, const std::string& name) {
  const std::string bundle = (dir / (name + ".kbundle")).string(), copy = (dir / (name + ".db")).string();
  if (testing::RunKiln("inspect export " + bundle + " --db " + db).exit_code != 0) return "";
  if (testing::RunKiln("inspect import " + bundle + " --db " + copy).exit_code != 0) return "";
  return copy;
}

// Tunes `module` on `port` (a few trials) until its job ends: whether the
// tuned replacement was stored.
bool TuneAndStore(uint16_t port, const std::string& module) {
  const nlohmann::json request = {{"hlo", module}, {"chip", "v5e"}, {"max_trials", 12}, {"seed", 5}};
  const FleetAnswer started = Request(port, "POST", "/v1/tune", request.dump(), kJsonBody);
  const std::string id = started.Text("id");
  if (id.empty()) return false;
  for (const FleetClock::time_point give_up = FleetClock::now() + std::chrono::seconds(60);
       FleetClock::now() < give_up; std::this_thread::sleep_for(std::chrono::milliseconds(20))) {
    const FleetAnswer job = Request(port, "GET", "/v1/tune/" + id);
    const std::string state = job.Text("state");
    if (state == "done") return job.body.value("stored", false);
    if (state == "failed" || state == "cancelled") return false;
  }
  return false;
}

}  // namespace

std::vector<FleetRow> MeasureExplain(const FleetConfig& config) {
  const std::string what = "5. explain names the changed instruction";
  Fleet fleet(config.servers < 3 ? 3 : config.servers, {});
  if (!fleet.ok()) return {{what, "not measured: " + fleet.problem(), "", "yes", false}};
  const uint16_t a = fleet.port(0), b = fleet.port(1), c = fleet.port(2);
  const std::string small = FleetScaleModule(5000, "2"), small_changed = FleetScaleModule(5000, "3");
  const std::string tunable = FleetTunableModule(5001), tunable_changed = FleetTunableModule(5001, "0.5");

  std::string problem;
  if (CompileOn(a, small).Text("cache") != "miss") problem = "A did not compile the small module";
  const std::string tunable_key = CompileOn(a, tunable).Text("key");
  if (problem.empty() && !fleet.WaitForPublishes(2)) problem = "A did not publish its entries";
  if (problem.empty() && !TuneAndStore(a, tunable)) problem = "A's tuning stored nothing";
  if (problem.empty() && !fleet.WaitForPublishes(3)) problem = "A did not publish the tuned replacement";
  const FleetAnswer on_b = CompileOn(b, small), on_c = CompileOn(c, tunable);
  if (problem.empty() && on_b.Text("tier") != "shared") problem = "B did not get the small module from Redis";
  if (problem.empty() && (on_c.Text("tier") != "shared" || on_c.Text("plan") != "tuned")) {
    problem = "C did not get the tuned replacement from Redis (" + on_c.Text("tier") + "/" + on_c.Text("plan") + ")";
  }
  if (!problem.empty()) return {{what, "not measured: " + problem, "", "yes", false}};

  char pattern[] = "/tmp/kiln-fleet-explain-XXXXXX";
  const fs::path dir = mkdtemp(pattern);
  const fs::path small_file = dir / "small_changed.hlo", tunable_file = dir / "tunable_changed.hlo";
  std::ofstream(small_file) << small_changed;
  std::ofstream(tunable_file) << tunable_changed;
  const std::string a_db = fleet.server(0).db_path().string();
  const std::string from_a = ImportedCopy(a_db, dir, "from_a");
  const std::string from_c = ImportedCopy(fleet.server(2).db_path().string(), dir, "from_c");

  const bool fetched_heuristic = ExplainNames(b, small_changed, "scale");
  const bool fetched_tuned = ExplainNames(c, tunable_changed, "shift");
  const bool imported = !from_a.empty() && CliExplainNames(small_file, from_a, "scale") &&
                        CliExplainNames(tunable_file, from_a, "shift");
  const bool imported_fetched = !from_c.empty() && CliExplainNames(tunable_file, from_c, "shift");
  const nlohmann::json by_key = {{"key", tunable_key}, {"chip", "v5e"}, {"max_trials", 4}};
  const FleetAnswer tune_c = Request(c, "POST", "/v1/tune", by_key.dump(), kJsonBody);
  const FleetAnswer tune_a = Request(a, "POST", "/v1/tune", by_key.dump(), kJsonBody);
  auto tune_text = [](const FleetAnswer& answer) {
    return std::to_string(answer.status) + (answer.Reason().empty() ? "" : " " + answer.Reason());
  };
  const bool local_heuristic = ExplainNames(a, small_changed, "scale");
  const bool local_tuned = ExplainNames(a, tunable_changed, "shift");
  const bool local_cli = CliExplainNames(small_file, a_db, "scale") && CliExplainNames(tunable_file, a_db, "shift");
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  const bool tuned_by_key = tune_c.status == 200 || tune_c.status == 202;
  return {
      {what + " (a constant changed)", "", "", "", std::nullopt},
      {"   entry fetched from Redis (heuristic): POST /v1/explain", YesNo(fetched_heuristic), YesNo(local_heuristic),
       "yes", fetched_heuristic},
      {"   entry fetched from Redis (tuned replacement)", YesNo(fetched_tuned), YesNo(local_tuned), "yes",
       fetched_tuned},
      {"   entries imported from a bundle: kiln inspect explain", YesNo(imported), YesNo(local_cli), "yes", imported},
      {"   tuned entry from Redis, then bundled and imported", YesNo(imported_fetched), YesNo(local_cli), "yes",
       imported_fetched},
      {"   POST /v1/tune by key alone on the fetched tuned entry", tune_text(tune_c), tune_text(tune_a), "200/202",
       tuned_by_key},
  };
}

}  // namespace kiln::bench
