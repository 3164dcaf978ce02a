#include "tools/tune_report.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace kiln::tools {
namespace {

nlohmann::json Optional(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::string Us(const std::optional<double>& value) {
  if (!value) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3f", *value);
  return buffer;
}

double Speedup(const autotune::TuneResult& r) { return r.tuned_us > 0 ? r.heuristic_us / r.tuned_us : 1; }

}  // namespace

nlohmann::json TuneJson(const autotune::TuneResult& r, const StoreOutcome& store) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const autotune::KernelComparison& k : r.kernels) {
    kernels.push_back({{"name", k.name},
                       {"kind", k.kind},
                       {"heuristic_us", Optional(k.heuristic_us)},
                       {"tuned_us", Optional(k.tuned_us)},
                       {"heuristic_tiling", k.heuristic_tiling},
                       {"tuned_tiling", k.tuned_tiling}});
  }
  nlohmann::json j = {
      {"key", r.key},
      {"chip", r.chip},
      {"plan", r.accepted ? "tuned" : "heuristic"},
      {"accepted", r.accepted},
      {"decision", r.decision},
      {"heuristic_us", r.heuristic_us},
      {"tuned_us", r.tuned_us},
      {"speedup", Speedup(r)},
      {"trials", r.trials},
      {"seconds", r.seconds},
      {"transfer_hits", r.transfer_hits},
      {"edge_flips", r.edge_flips},
      {"tile_changes", r.tile_changes},
      {"tiling_gain_us", r.tiling_gain_us},
      {"fusion_gain_us", r.fusion_gain_us},
      {"body_gain_us", r.body_gain_us},
      {"schedule_gain_us", r.schedule_gain_us},
      {"schedule_order", r.schedule_order},
      {"schedule_orders_measured", r.schedule_orders_measured},
      {"exposed_ici_us", r.exposed_ici_us},
      {"schedule_note", r.schedule_note},
      {"body_flips", r.body_flips},
      {"body_computations", r.body_computations},
      {"body_moves_measured", r.body_moves_measured},
      {"verified_body_kernels", r.verified_body_kernels},
      {"invalid_candidates", r.invalid_candidates},
      {"model_skipped", r.model_skipped},
      {"fusion_searched", r.fusion_searched},
      {"fusion_note", r.fusion_note},
      {"verification", r.verification},
      {"verified_kernels", r.verified_kernels},
      {"rejected_by_verification", r.rejected_by_verification},
      {"kept_heuristic_instructions", r.kept_heuristic_instructions},
      {"spearman_analytic", Optional(r.spearman_analytic)},
      {"spearman_calibrated", Optional(r.spearman_calibrated)},
      {"ranked_kernels", r.ranked_kernels},
      {"stage_ms",
       {{"prepare", r.ms.prepare},
        {"compile", r.ms.compile},
        {"timing", r.ms.timing},
        {"model", r.ms.model},
        {"verify", r.ms.verify},
        {"records", r.ms.records}}},
      {"kernels", kernels},
  };
  if (store.requested) {
    j["stored"] = store.stored;
    j["store_note"] = store.note;
    j["records_stored"] = store.records;
  }
  return j;
}

std::string TuneTable(const autotune::TuneResult& r, const StoreOutcome& store, size_t max_rows) {
  std::vector<const autotune::KernelComparison*> rows;
  for (const autotune::KernelComparison& k : r.kernels) rows.push_back(&k);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    return a->heuristic_us.value_or(a->tuned_us.value_or(0)) > b->heuristic_us.value_or(b->tuned_us.value_or(0));
  });
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line), "%-28s %-13s %13s %13s  %-26s %s\n", "kernel", "kind", "heuristic us",
                "tuned us", "heuristic tiling", "tuned tiling");
  out += line;
  for (size_t i = 0; i < rows.size() && i < max_rows; ++i) {
    const autotune::KernelComparison& k = *rows[i];
    std::snprintf(line, sizeof(line), "%-28.28s %-13.13s %13s %13s  %-26.26s %s\n", k.name.c_str(), k.kind.c_str(),
                  Us(k.heuristic_us).c_str(), Us(k.tuned_us).c_str(), k.heuristic_tiling.c_str(),
                  k.tuned_tiling.c_str());
    out += line;
  }
  if (rows.size() > max_rows) out += "... " + std::to_string(rows.size() - max_rows) + " faster kernels not shown\n";
  std::snprintf(line, sizeof(line),
                "%s %.2fx: heuristic %.3f us, tuned %.3f us; %lld trials in %.1f s, %zu edge flips, %lld tile "
                "changes, %lld transfer hits; key %s\n",
                r.accepted ? "tuned" : "kept heuristic", Speedup(r), r.heuristic_us, r.tuned_us,
                static_cast<long long>(r.trials), r.seconds, r.edge_flips.size(),
                static_cast<long long>(r.tile_changes), static_cast<long long>(r.transfer_hits), r.key.c_str());
  out += line;
  out += r.decision + "\n";
  if (!r.fusion_note.empty()) out += "fusion: " + r.fusion_note + "\n";
  if (r.body_computations > 0) {
    std::snprintf(line, sizeof(line), "loop bodies: %lld computations searched, %lld moves measured, %zu flips kept, %.1f us gained\n",
                  static_cast<long long>(r.body_computations), static_cast<long long>(r.body_moves_measured),
                  r.body_flips.size(), r.body_gain_us);
    out += line;
  }
  if (!r.schedule_note.empty()) {
    std::snprintf(line, sizeof(line), "schedule: %.1f us waited on the links, %lld orders timed, %.1f us gained: ",
                  r.exposed_ici_us, static_cast<long long>(r.schedule_orders_measured), r.schedule_gain_us);
    out += line + r.schedule_note + "\n";
  }
  if (store.requested) out += "store: " + store.note + "\n";
  return out;
}

}  // namespace kiln::tools
