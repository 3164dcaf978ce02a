// A command's failure as JSON, for commands run with --json: one document
// on stdout whatever happened. {"code", "message", "file", "line",
// "column"}; the place fields only when the error has one. Pure.
#pragma once

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

}  // namespace kiln::tools
