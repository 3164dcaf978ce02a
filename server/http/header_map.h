// HTTP header fields with case-insensitive names, in arrival order.
//
// A HeaderMap is plain data (copyable, thread-compatible). Repeated fields are
// kept as separate entries; Get returns the first. Lookups are linear, which
// beats hashing for the dozen fields a request carries.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/ascii.h"

namespace kiln::http {

// True when the comma-separated `list` (e.g. "gzip, zstd;q=0.5") holds `token`
// with a non-zero q value.
bool ListHasToken(std::string_view list, std::string_view token);

class HeaderMap {
 public:
  using Field = std::pair<std::string, std::string>;

  void Add(std::string name, std::string value);
  // Replaces every field named `name` with one field.
  void Set(std::string name, std::string value);
  void Remove(std::string_view name);

  // The first value of `name`, or nullopt. The view lives as long as the map
  // is not modified.
  std::optional<std::string_view> Get(std::string_view name) const;
  bool Has(std::string_view name) const { return Get(name).has_value(); }

  const std::vector<Field>& fields() const { return fields_; }
  size_t size() const { return fields_.size(); }
  bool empty() const { return fields_.empty(); }

 private:
  std::vector<Field> fields_;
};

}  // namespace kiln::http
