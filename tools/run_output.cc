#include "tools/run_output.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "runtime/timing/profile_output.h"

namespace kiln::tools {
namespace {

std::string Number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", v);
  return buffer;
}

}  // namespace

LiteralSummary SummarizeLiteral(const hlo::Literal& array) {
  LiteralSummary summary;
  summary.count = array.element_count();
  double sum = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -min;
  for (int64_t i = 0; i < summary.count; ++i) {
    double v = array.GetAsDouble(i);
    if (std::isnan(v)) {
      ++summary.nan_count;
      continue;
    }
    min = std::min(min, v);
    max = std::max(max, v);
    sum += v;
  }
  int64_t numbers = summary.count - summary.nan_count;
  if (numbers > 0) {
    summary.min = min;
    summary.max = max;
    summary.mean = sum / static_cast<double>(numbers);
  }
  for (int64_t i = 0; i < std::min<int64_t>(summary.count, kSummaryValues); ++i) {
    std::string text;
    hlo::AppendLiteralElement(array, i, text);
    summary.first.push_back(std::move(text));
  }
  return summary;
}

std::string FormatChecks(const CheckSummary& checks) {
  std::string out = "checks: " + std::to_string(checks.passed) + " passed, " + std::to_string(checks.failed) +
                    " failed\n";
  for (const runtime::CheckOutcome& f : checks.failures) out += "  failed: " + CheckText(f) + "\n";
  return out;
}

std::string CheckText(const runtime::CheckOutcome& check) {
  std::string out = check.check;
  if (check.line > 0) out += " at line " + std::to_string(check.line);
  out += " (%" + check.name + "): " + check.message;
  return out;
}

std::string FormatRunText(const RunReport& report, bool print_literals, size_t top) {
  std::string out;
  for (const runtime::io::NamedTensor& output : report.outputs) {
    out += "output " + output.name + ": " + output.value.shape().ToString() + "\n";
    LiteralSummary s = SummarizeLiteral(output.value);
    if (s.count > 0) {
      if (s.nan_count == s.count) {
        out += "  all " + std::to_string(s.count) + (s.count == 1 ? " value is NaN" : " values are NaN");
      } else {
        out += "  min " + Number(s.min) + " max " + Number(s.max) + " mean " + Number(s.mean);
        if (s.nan_count > 0) out += " nan " + std::to_string(s.nan_count);
      }
      out += "\n  first:";
      for (size_t i = 0; i < s.first.size(); ++i) out += (i == 0 ? " " : ", ") + s.first[i];
      if (s.count > static_cast<int64_t>(s.first.size())) out += ", ...";
      out += "\n";
    }
    if (print_literals) out += output.value.ToString() + "\n";
  }
  if (report.computed_values) out += "eval " + Number(report.eval_ms) + " ms\n";
  if (report.checks) out += FormatChecks(*report.checks);
  if (!report.ran_executable) return out;
  out += "executable " + report.executable_key + " (" + report.plan + " plan, " + report.topology;
  if (report.compiled_here) out += ", compiled in " + Number(report.compile_ms) + " ms";
  out += ")\n";
  if (report.profile) {
    out += runtime::timing::FormatProfile(*report.profile, top);
  } else {
    out += "device time unavailable: " + report.timing_error + "\n";
  }
  return out;
}

std::string FormatRunJson(const RunReport& report, bool print_literals) {
  nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
  for (const runtime::io::NamedTensor& output : report.outputs) {
    LiteralSummary s = SummarizeLiteral(output.value);
    const bool numbers = s.count > s.nan_count;
    nlohmann::ordered_json entry = {
        {"name", output.name},
        {"shape", output.value.shape().ToString()},
        {"count", s.count},
        // No number to summarize (every value NaN, or none): null, not 0.
        {"min", numbers ? nlohmann::ordered_json(s.min) : nlohmann::ordered_json(nullptr)},
        {"max", numbers ? nlohmann::ordered_json(s.max) : nlohmann::ordered_json(nullptr)},
        {"mean", numbers ? nlohmann::ordered_json(s.mean) : nlohmann::ordered_json(nullptr)},
        {"nan_count", s.nan_count},
        {"first", s.first},
    };
    if (print_literals) entry["literal"] = output.value.ToString();
    outputs.push_back(std::move(entry));
  }
  nlohmann::ordered_json root = {{"module", report.module_name}};
  if (report.computed_values) {
    root["outputs"] = std::move(outputs);
    root["eval_ms"] = report.eval_ms;
  }
  if (report.checks) {
    nlohmann::ordered_json failures = nlohmann::ordered_json::array();
    for (const runtime::CheckOutcome& f : report.checks->failures) {
      failures.push_back({{"check", f.check}, {"name", f.name}, {"line", f.line}, {"message", f.message}});
    }
    root["checks"] = {{"passed", report.checks->passed},
                      {"failed", report.checks->failed},
                      {"failures", std::move(failures)}};
  }
  if (report.ran_executable) {
    root["key"] = report.executable_key;
    root["plan"] = report.plan;
    root["runs_on"] = report.topology;
    if (report.compiled_here) root["compile_ms"] = report.compile_ms;
    if (report.profile) {
      nlohmann::json profile = runtime::timing::ProfileToJson(*report.profile);
      for (const auto& field : profile.items()) root[field.key()] = field.value();
    } else {
      root["device_error"] = report.timing_error;
    }
  }
  // Names come from HLO text and literals are ASCII; replace anything else
  // rather than throw.
  return root.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace kiln::tools
