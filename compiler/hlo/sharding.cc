#include "compiler/hlo/sharding.h"

#include <algorithm>

#include "base/str_cat.h"
#include "compiler/hlo/int_list_text.h"

namespace kiln::hlo {
namespace {


std::string DimsText(const std::vector<int64_t>& dims) { return IntListText(dims, '[', ']'); }

void CollectLeaves(const Shape& shape, std::vector<const Shape*>& out) {
  if (!shape.IsTuple()) {
    out.push_back(&shape);
    return;
  }
  for (const Shape& e : shape.tuple_shapes()) CollectLeaves(e, out);
}

}  // namespace

int64_t ShapeLeafCount(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t n = 0;
  for (const Shape& e : shape.tuple_shapes()) n += ShapeLeafCount(e);
  return n;
}

HloSharding HloSharding::Maximal(int64_t device) {
  HloSharding s(Type::kMaximal);
  s.device_ = device;
  return s;
}

Result<HloSharding> HloSharding::Tiled(std::vector<int64_t> tile_dims, std::vector<int64_t> devices,
                                       std::vector<SubgroupType> subgroups) {
  if (subgroups.size() > tile_dims.size()) {
    return InvalidArgumentError(StrCat("tile assignment ", DimsText(tile_dims), " has fewer dims than its ",
                                       subgroups.size(), " subgroup types"));
  }
  int64_t product = 1;
  for (int64_t d : tile_dims) {
    if (d <= 0) return InvalidArgumentError(StrCat("tile assignment ", DimsText(tile_dims), " has a dim < 1"));
    product *= d;
    if (product > kMaxShardingDevices) {
      return InvalidArgumentError(StrCat("tile assignment ", DimsText(tile_dims), " holds more than ",
                                         kMaxShardingDevices, " devices"));
    }
  }
  if (product != static_cast<int64_t>(devices.size())) {
    return InvalidArgumentError(StrCat("tile assignment ", DimsText(tile_dims), " needs ", product,
                                       " devices but ", devices.size(), " are listed"));
  }
  // Subgroup dims of size 1 say nothing; drop them.
  for (size_t i = subgroups.size(); i-- > 0;) {
    size_t dim = tile_dims.size() - subgroups.size() + i;
    if (tile_dims[dim] == 1) {
      tile_dims.erase(tile_dims.begin() + static_cast<std::ptrdiff_t>(dim));
      subgroups.erase(subgroups.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  HloSharding s(Type::kTiled);
  s.tile_dims_ = std::move(tile_dims);
  s.devices_ = std::move(devices);
  s.subgroups_ = std::move(subgroups);
  bool data_untiled = true;
  for (int64_t i = 0; i < s.data_rank(); ++i) data_untiled &= s.tile_dims_[i] == 1;
  if (data_untiled && !s.HasManualSubgroup()) return Replicate();
  s.position_.assign(s.devices_.size(), -1);
  for (size_t i = 0; i < s.devices_.size(); ++i) {
    int64_t d = s.devices_[i];
    if (d >= 0 && d < static_cast<int64_t>(s.position_.size()) && s.position_[d] == -1) {
      s.position_[d] = static_cast<int64_t>(i);
    }
  }
  return s;
}

HloSharding HloSharding::Tuple(std::vector<HloSharding> elements) {
  HloSharding s(Type::kTuple);
  s.tuple_ = std::move(elements);
  return s;
}

Result<HloSharding> HloSharding::FromDeviceTiles(const std::vector<int64_t>& counts,
                                                 const std::vector<std::vector<int64_t>>& index_of_device) {
  int64_t tiles = 1;
  for (int64_t c : counts) tiles *= c;
  int64_t n = static_cast<int64_t>(index_of_device.size());
  if (tiles <= 0 || n % tiles != 0) {
    return InvalidArgumentError(StrCat(n, " devices cannot hold ", tiles, " tiles equally"));
  }
  int64_t per_tile = n / tiles;
  std::vector<std::vector<int64_t>> members(tiles);
  for (int64_t d = 0; d < n; ++d) {
    const std::vector<int64_t>& index = index_of_device[d];
    if (index.size() != counts.size()) return InternalError("tile index rank does not match the counts");
    int64_t linear = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      if (index[i] < 0 || index[i] >= counts[i]) return InternalError("tile index out of range");
      linear = linear * counts[i] + index[i];
    }
    members[linear].push_back(d);
  }
  std::vector<int64_t> devices;
  devices.reserve(n);
  for (const auto& m : members) {
    if (static_cast<int64_t>(m.size()) != per_tile) {
      return InvalidArgumentError(StrCat("the tiles of ", DimsText(counts), " are not held by ", per_tile,
                                         " devices each"));
    }
    devices.insert(devices.end(), m.begin(), m.end());
  }
  std::vector<int64_t> dims = counts;
  std::vector<SubgroupType> subgroups;
  if (per_tile > 1) {
    dims.push_back(per_tile);
    subgroups.push_back(SubgroupType::kReplicated);
  }
  return Tiled(std::move(dims), std::move(devices), std::move(subgroups));
}

bool HloSharding::HasManualSubgroup() const {
  return std::find(subgroups_.begin(), subgroups_.end(), SubgroupType::kManual) != subgroups_.end();
}

int64_t HloSharding::data_rank() const {
  return static_cast<int64_t>(tile_dims_.size() - subgroups_.size());
}

std::vector<int64_t> HloSharding::TileCounts(int64_t rank) const {
  if (!IsTiled()) return std::vector<int64_t>(rank, 1);
  return std::vector<int64_t>(tile_dims_.begin(), tile_dims_.begin() + data_rank());
}

std::vector<int64_t> HloSharding::TileIndexOfDevice(int64_t device, int64_t rank) const {
  if (!IsTiled()) return std::vector<int64_t>(rank, 0);
  if (device < 0 || device >= static_cast<int64_t>(position_.size()) || position_[device] < 0) return {};
  int64_t linear = position_[device];
  std::vector<int64_t> index(tile_dims_.size());
  for (size_t i = tile_dims_.size(); i-- > 0;) {
    index[i] = linear % tile_dims_[i];
    linear /= tile_dims_[i];
  }
  index.resize(data_rank());
  return index;
}

std::vector<HloSharding> HloSharding::LeafShardings(const Shape& shape) const {
  if (IsTuple()) return tuple_;
  return std::vector<HloSharding>(ShapeLeafCount(shape), *this);
}

HloSharding HloSharding::TupleElement(const Shape& shape, int64_t index) const {
  if (!IsTuple()) return *this;
  size_t first = 0;
  for (int64_t i = 0; i < index; ++i) first += ShapeLeafCount(shape.tuple_shapes(i));
  const Shape& element = shape.tuple_shapes(index);
  size_t count = ShapeLeafCount(element);
  if (first + count > tuple_.size()) return Replicate();
  if (!element.IsTuple()) return tuple_[first];
  return Tuple(std::vector<HloSharding>(tuple_.begin() + first, tuple_.begin() + first + count));
}

Status HloSharding::Validate(const Shape& shape, int64_t num_devices) const {
  if (IsTuple()) {
    if (!shape.IsTuple()) {
      return InvalidArgumentError(StrCat("a tuple sharding of ", tuple_.size(),
                                         " elements on the non-tuple shape ", shape.ToString()));
    }
    std::vector<const Shape*> leaves;
    CollectLeaves(shape, leaves);
    if (leaves.size() != tuple_.size()) {
      return InvalidArgumentError(StrCat("a tuple sharding of ", tuple_.size(), " elements on ", shape.ToString(),
                                         ", which has ", leaves.size(), " leaves"));
    }
    for (size_t i = 0; i < leaves.size(); ++i) {
      Status element = tuple_[i].Validate(*leaves[i], num_devices);
      if (!element) return element.error().WithContext(StrCat("tuple element ", i));
    }
    return Ok();
  }
  if (shape.IsTuple()) {
    std::vector<const Shape*> leaves;
    CollectLeaves(shape, leaves);
    for (const Shape* leaf : leaves) KILN_RETURN_IF_ERROR(Validate(*leaf, num_devices));
    return Ok();
  }
  switch (type_) {
    case Type::kReplicated:
    case Type::kManual:
    case Type::kUnknown:
      return Ok();
    case Type::kMaximal:
      if (device_ < 0 || device_ >= num_devices) {
        return InvalidArgumentError(StrCat("maximal device ", device_, " is not one of the ", num_devices,
                                           " partitions"));
      }
      return Ok();
    case Type::kTuple:
    case Type::kTiled:
      break;
  }
  if (!shape.IsArray()) {
    return InvalidArgumentError(StrCat("a tiled sharding on the non-array shape ", shape.ToString()));
  }
  if (data_rank() != shape.rank()) {
    std::string subgroup_note =
        subgroups_.empty() ? "" : StrCat(" (", subgroups_.size(), " of them subgroup dims)");
    return InvalidArgumentError(StrCat("tile assignment ", DimsText(tile_dims_), " has rank ", tile_dims_.size(),
                                       subgroup_note, " but the shape ", shape.ToString(), " has rank ",
                                       shape.rank()));
  }
  if (static_cast<int64_t>(devices_.size()) != num_devices) {
    return InvalidArgumentError(StrCat("tile assignment ", DimsText(tile_dims_), " holds ", devices_.size(),
                                       " devices but the module runs on ", num_devices, " partitions"));
  }
  std::vector<bool> seen(num_devices, false);
  for (int64_t d : devices_) {
    if (d < 0 || d >= num_devices) {
      return InvalidArgumentError(StrCat("device ", d, " is not one of the ", num_devices, " partitions"));
    }
    if (seen[d]) return InvalidArgumentError(StrCat("device ", d, " is listed twice"));
    seen[d] = true;
  }
  return Ok();
}

std::string HloSharding::ToString() const {
  switch (type_) {
    case Type::kReplicated:
      return "{replicated}";
    case Type::kManual:
      return "{manual}";
    case Type::kUnknown:
      return "{unknown}";
    case Type::kMaximal:
      return StrCat("{maximal device=", device_, "}");
    case Type::kTuple: {
      std::string out = "{";
      for (size_t i = 0; i < tuple_.size(); ++i) {
        if (i > 0) out += ", ";
        out += tuple_[i].ToString();
      }
      return out + "}";
    }
    case Type::kTiled:
      break;
  }
  std::string out = "{devices=" + DimsText(tile_dims_);
  bool iota = true;
  for (size_t i = 0; i < devices_.size(); ++i) iota &= devices_[i] == static_cast<int64_t>(i);
  if (iota) {
    out += StrCat("<=[", devices_.size(), "]");
  } else {
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (i > 0) out += ',';
      out += std::to_string(devices_[i]);
    }
  }
  if (subgroups_.size() == 1 && subgroups_[0] == SubgroupType::kReplicated) {
    out += " last_tile_dim_replicate";
  } else if (!subgroups_.empty()) {
    out += " last_tile_dims={";
    for (size_t i = 0; i < subgroups_.size(); ++i) {
      if (i > 0) out += ", ";
      out += subgroups_[i] == SubgroupType::kManual ? "manual" : "replicated";
    }
    out += "}";
  }
  return out + "}";
}

Result<std::optional<HloSharding>> InstructionSharding(const Instruction& instruction,
                                                       int64_t num_devices) {
  const std::pmr::string* text = instruction.AttributeText("sharding");
  if (text == nullptr) return std::optional<HloSharding>();
  auto place = [&](const Error& e) {
    Error out = e;
    return out.WithContext(StrCat("instruction %", instruction.name(), ": sharding ", *text));
  };
  Result<HloSharding> sharding = ParseSharding(*text);
  if (!sharding) return place(sharding.error());
  Status valid = sharding->Validate(instruction.shape(), num_devices);
  if (!valid) return place(valid.error());
  return std::optional<HloSharding>(std::move(*sharding));
}

int64_t ShardSize(int64_t dim, int64_t tiles) { return tiles <= 1 ? dim : (dim + tiles - 1) / tiles; }

Shape ShardShape(const Shape& global, const HloSharding& sharding) {
  if (!sharding.IsTiled() || !global.IsArray() || sharding.data_rank() != global.rank()) return global;
  std::vector<int64_t> dims = global.dimensions();
  std::vector<int64_t> counts = sharding.TileCounts(global.rank());
  for (size_t i = 0; i < dims.size(); ++i) dims[i] = ShardSize(dims[i], counts[i]);
  Shape local(global.element_type(), std::move(dims));
  local.mutable_layout() = global.layout();
  return local;
}

ShardExtent DeviceShardExtent(const Shape& global, const HloSharding& sharding, int64_t device) {
  ShardExtent extent;
  int64_t rank = global.rank();
  std::vector<int64_t> counts = sharding.TileCounts(rank);
  std::vector<int64_t> index = sharding.TileIndexOfDevice(device, rank);
  if (static_cast<int64_t>(index.size()) != rank) index.assign(rank, 0);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t size = ShardSize(global.dimensions(i), counts[i]);
    int64_t offset = index[i] * size;
    extent.offset.push_back(offset);
    extent.valid.push_back(std::clamp<int64_t>(global.dimensions(i) - offset, 0, size));
  }
  return extent;
}

}  // namespace kiln::hlo
