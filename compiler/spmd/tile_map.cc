#include "compiler/spmd/tile_map.h"

#include <algorithm>
#include <map>

#include "base/str_cat.h"

namespace kiln::spmd {

bool TileMap::IsReplicated() const {
  return std::all_of(counts.begin(), counts.end(), [](int64_t c) { return c == 1; });
}

TileMap TileMapOf(const hlo::HloSharding& sharding, int64_t rank, int64_t num_devices) {
  TileMap map;
  map.counts = sharding.TileCounts(rank);
  map.index.reserve(num_devices);
  for (int64_t d = 0; d < num_devices; ++d) {
    std::vector<int64_t> index = sharding.TileIndexOfDevice(d, rank);
    if (static_cast<int64_t>(index.size()) != rank) index.assign(rank, 0);
    map.index.push_back(std::move(index));
  }
  return map;
}

Result<hlo::HloSharding> ToSharding(const TileMap& map) { return hlo::HloSharding::FromDeviceTiles(map.counts, map.index); }

TileMap Remap(const TileMap& source, const std::vector<int64_t>& from_dim) {
  TileMap out;
  for (int64_t f : from_dim) out.counts.push_back(f >= 0 ? source.counts[f] : 1);
  out.index.reserve(source.index.size());
  for (const std::vector<int64_t>& index : source.index) {
    std::vector<int64_t> mapped;
    mapped.reserve(from_dim.size());
    for (int64_t f : from_dim) mapped.push_back(f >= 0 ? index[f] : 0);
    out.index.push_back(std::move(mapped));
  }
  return out;
}

Result<std::vector<std::vector<int64_t>>> VaryingGroups(const TileMap& map, const std::vector<int64_t>& vary) {
  std::vector<bool> varies(map.rank(), false);
  int64_t group_size = 1;
  for (int64_t v : vary) {
    varies[v] = true;
    group_size *= map.counts[v];
  }
  // Replica ordinal: how many earlier devices hold the same tile.
  std::map<std::vector<int64_t>, int64_t> seen;
  std::map<std::vector<int64_t>, std::vector<std::pair<std::vector<int64_t>, int64_t>>> groups;
  for (int64_t d = 0; d < map.devices(); ++d) {
    const std::vector<int64_t>& index = map.index[d];
    int64_t ordinal = seen[index]++;
    std::vector<int64_t> key;
    std::vector<int64_t> position;
    for (int64_t i = 0; i < map.rank(); ++i) (varies[i] ? position : key).push_back(index[i]);
    key.push_back(ordinal);
    groups[key].emplace_back(std::move(position), d);
  }
  std::vector<std::vector<int64_t>> out;
  for (auto& [key, members] : groups) {
    std::sort(members.begin(), members.end());
    bool distinct = std::adjacent_find(members.begin(), members.end(), [](const auto& a, const auto& b) {
                      return a.first == b.first;
                    }) == members.end();
    if (static_cast<int64_t>(members.size()) != group_size || !distinct) {
      return InvalidArgumentError(StrCat("devices cannot be grouped over ", vary.size(), " tiled dims"));
    }
    std::vector<int64_t> group;
    for (const auto& m : members) group.push_back(m.second);
    out.push_back(std::move(group));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::vector<int64_t>> ReshapeTileSource(const hlo::Shape& from, const hlo::Shape& to,
                                                      const std::vector<int64_t>& from_counts) {
  std::vector<int64_t> source(to.rank(), -1);
  // prefix[i]: elements of one step of dimension i-1, i.e. the product of dims before i.
  auto prefixes = [](const hlo::Shape& s) {
    std::vector<int64_t> p(s.rank() + 1, 1);
    for (int64_t i = 0; i < s.rank(); ++i) p[i + 1] = p[i] * s.dimensions(i);
    return p;
  };
  std::vector<int64_t> pf = prefixes(from);
  std::vector<int64_t> pt = prefixes(to);
  for (int64_t i = 0; i < from.rank(); ++i) {
    int64_t c = from_counts[i];
    if (c == 1) continue;
    if (from.dimensions(i) % c != 0) return std::nullopt;
    int64_t j = 0;
    while (j < to.rank() && (pt[j] != pf[i] || to.dimensions(j) == 1)) ++j;
    if (j == to.rank() || to.dimensions(j) % c != 0) return std::nullopt;
    int64_t f = from.dimensions(i);
    int64_t t = to.dimensions(j);
    if (t > f) {
      // from dims i.. merge into to dim j: the minor ones must be untiled.
      if (t % f != 0) return std::nullopt;
      for (int64_t k = i + 1; k < from.rank() && pf[k] < pt[j + 1]; ++k) {
        if (from_counts[k] != 1) return std::nullopt;
      }
    } else if (f % t != 0) {
      return std::nullopt;
    }
    source[j] = i;
  }
  return source;
}

}  // namespace kiln::spmd
