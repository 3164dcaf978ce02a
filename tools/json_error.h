// A command's failure as JSON, for commands run with --json: one document
// on stdout whatever happened. {"code", "message", "file", "line",
// "column"}; the place fields only when the error has one. Pure.
#pragma once

#include <cstdio>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace kiln::tools {

inline nlohmann::json ErrorJson(const Error& error) {
  nlohmann::json out = {{"code", error.ReasonOrCodeName()}, {"message", error.ToString()}};
  const SourceLocation& where = error.where();
  if (!where.file.empty()) out["file"] = where.file;
  if (where.line > 0) out["line"] = where.line;
  if (where.column > 0) out["column"] = where.column;
  return out;
}

// How every command reports its failure: "kiln COMMAND: message" on
// stderr and, with --json, the document {"error": ErrorJson} on stdout, so
// a script reading stdout always gets one JSON document.
inline void ReportFailure(std::string_view command, const Error& error, bool json) {
  std::fprintf(stderr, "kiln %.*s: %s\n", static_cast<int>(command.size()), command.data(), error.ToString().c_str());
  if (json) {
    std::printf("%s\n",
                nlohmann::json{{"error", ErrorJson(error)}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
}

}  // namespace kiln::tools
