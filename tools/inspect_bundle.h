// kiln inspect export / import: a store's entries and tuning records to and
// from one bundle file (cache/bundle.h). Each runs once per process call;
// not thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace kiln::tools {

struct BundleArgs {
  std::string db;
  std::string file;
  std::string tenant;             // export: empty for every tenant; import: empty for the bundle's own
  std::string chip;               // export: empty for every chip
  std::vector<std::string> keys;  // export: empty for every key
  std::string since;              // export: empty for all time
  bool json = false;
};

// Writes the selected entries and records to args.file through a temporary
// file beside it renamed into place: a killed export leaves no half bundle
// under that name. Fails when the store does not exist (never creates one).
Status ExportBundleFile(const BundleArgs& args);

// Reads and checks the whole bundle, then reads it again into the store
// (created if needed) in batches of about 64 MiB; memory holds one entry
// while checking and one batch while writing, whatever the bundle's size.
// A damaged or foreign bundle is refused with the reason and nothing is
// written; a failure while writing (a full disk, the file changed between
// the passes) keeps the batches written and says how many. Prints the
// counts.
Status ImportBundleFile(const BundleArgs& args);

// "2026-11-24", "2026-11-24T10:30:00Z" (UTC) or Unix seconds, as Unix ms.
Result<int64_t> ParseSinceTime(const std::string& text);

}  // namespace kiln::tools
