#include "tools/prewarm_report.h"

#include <algorithm>

#include "base/str_cat.h"

namespace kiln::tools {
namespace {

std::string Row(std::string_view name, const std::string& value) {
  std::string row(name);
  row.resize(std::max<size_t>(row.size() + 1, 18), ' ');
  return row + value + "\n";
}

std::string Seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f s", seconds);
  return text;
}

}  // namespace

std::vector<std::pair<std::string, int64_t>> SkipCounts(const std::vector<SkippedPath>& skipped) {
  std::map<std::string, int64_t> counts;
  for (const SkippedPath& skip : skipped) ++counts[skip.reason];
  std::vector<std::pair<std::string, int64_t>> out(counts.begin(), counts.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::string PrewarmTable(const PrewarmReport& report) {
  std::string out;
  if (report.dry_run) {
    out += StrCat("would compile (", report.would_compile.size(), ")\n");
    for (const std::string& line : report.would_compile) out += "  " + line + "\n";
    out += "\n";
  }
  std::string chips;
  for (const std::string& chip : report.chips) chips += (chips.empty() ? "" : ",") + chip;
  out += Row("target", report.target + " (chips " + chips + ")");
  out += Row("files", std::to_string(report.files));
  out += Row("modules found", std::to_string(report.found));
  out += Row("skipped", std::to_string(report.skipped.size()));
  for (const auto& [reason, count] : SkipCounts(report.skipped)) out += StrCat("  ", count, "  ", reason, "\n");
  out += Row("entries", StrCat(report.entries, " (", report.duplicates, " duplicates)"));
  out += Row("already cached", std::to_string(report.cached));
  out += Row(report.dry_run ? "would compile" : "compiled", std::to_string(report.compiled));
  if (!report.tune_notes.empty()) out += Row("tuned", std::to_string(report.tuned));
  out += Row("failed", std::to_string(report.failures.size()));
  out += Row("compile seconds", Seconds(report.compile_seconds));
  out += Row("executable bytes", std::to_string(report.executable_bytes));
  if (report.stored_bytes) out += Row("stored bytes", std::to_string(*report.stored_bytes) + " (zstd)");
  out += Row("seconds", Seconds(report.seconds));
  bool problems = false;
  for (const SkippedPath& skip : report.skipped) {
    if (!skip.problem) continue;
    if (!problems) out += "\nnot read:\n";
    problems = true;
    out += "  " + skip.path + ": " + skip.reason + "\n";
  }
  if (!report.failures.empty()) out += "\nfailed:\n";
  for (const JobFailure& failure : report.failures) out += "  " + failure.where + ": " + failure.reason + "\n";
  if (!report.tune_notes.empty()) out += "\ntuning:\n";
  for (const std::string& note : report.tune_notes) out += "  " + note + "\n";
  return out;
}

nlohmann::json PrewarmJson(const PrewarmReport& report) {
  nlohmann::json skipped_by_reason = nlohmann::json::object();
  for (const auto& [reason, count] : SkipCounts(report.skipped)) skipped_by_reason[reason] = count;
  nlohmann::json problems = nlohmann::json::array();
  for (const SkippedPath& skip : report.skipped) {
    if (skip.problem) problems.push_back({{"path", skip.path}, {"reason", skip.reason}});
  }
  nlohmann::json failures = nlohmann::json::array();
  for (const JobFailure& failure : report.failures) failures.push_back({{"where", failure.where}, {"reason", failure.reason}});
  nlohmann::json out = {
      {"dry_run", report.dry_run},
      {"target", report.target},
      {"chips", report.chips},
      {"files", report.files},
      {"found", report.found},
      {"entries", report.entries},
      {"duplicates", report.duplicates},
      {"cached", report.cached},
      {"compiled", report.compiled},
      {"failed", static_cast<int64_t>(report.failures.size())},
      {"failures", failures},
      {"skipped", static_cast<int64_t>(report.skipped.size())},
      {"skipped_by_reason", skipped_by_reason},
      {"not_read", problems},
      {"compile_seconds", report.compile_seconds},
      {"executable_bytes", report.executable_bytes},
      {"stored_bytes", report.stored_bytes ? nlohmann::json(*report.stored_bytes) : nlohmann::json(nullptr)},
      {"seconds", report.seconds},
  };
  if (report.dry_run) out["would_compile"] = report.would_compile;
  if (!report.tune_notes.empty()) {
    out["tuned"] = report.tuned;
    out["tune_notes"] = report.tune_notes;
  }
  return out;
}

}  // namespace kiln::tools
