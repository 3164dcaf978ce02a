#include "compiler/hlo/sharded_literal.h"

#include <algorithm>
#include <cstring>

#include "base/str_cat.h"

namespace kiln::hlo {
namespace {

size_t ElementBytes(const Literal& literal) {
  int64_t count = literal.element_count();
  return count > 0 ? literal.data().size() / static_cast<size_t>(count) : 0;
}

// Calls copy(global_linear, local_linear) for every real element of the
// shard at `extent` of a `global`-shaped value whose shard is `local`.
template <typename Copy>
void ForEachShardElement(const Shape& global, const Shape& local, const ShardExtent& extent, Copy copy) {
  int64_t rank = global.rank();
  for (int64_t i = 0; i < rank; ++i) {
    if (extent.valid[i] == 0) return;
  }
  std::vector<int64_t> index(rank, 0);
  for (;;) {
    int64_t g = 0;
    int64_t l = 0;
    for (int64_t i = 0; i < rank; ++i) {
      g = g * global.dimensions(i) + extent.offset[i] + index[i];
      l = l * local.dimensions(i) + index[i];
    }
    copy(g, l);
    int64_t i = rank - 1;
    for (; i >= 0; --i) {
      if (++index[i] < extent.valid[i]) break;
      index[i] = 0;
    }
    if (i < 0) return;
  }
}

Result<Literal> ArrayShard(const Literal& global, const HloSharding& sharding, int64_t device) {
  Shape local_shape = ShardShape(global.shape(), sharding);
  Literal local(local_shape);
  size_t width = ElementBytes(global);
  if (width == 0) return local;
  ShardExtent extent = DeviceShardExtent(global.shape(), sharding, device);
  ForEachShardElement(global.shape(), local_shape, extent, [&](int64_t g, int64_t l) {
    std::memcpy(local.mutable_data().data() + l * width, global.data().data() + g * width, width);
  });
  return local;
}

Result<Literal> AssembleArray(std::span<const Literal> shards, const Shape& global_shape,
                              const HloSharding& sharding) {
  if (sharding.IsManual() || sharding.HasManualSubgroup()) {
    return InvalidArgumentError("a manually sharded value has no global form");
  }
  Shape local_shape = ShardShape(global_shape, sharding);
  for (size_t d = 0; d < shards.size(); ++d) {
    if (!shards[d].shape().Compatible(local_shape)) {
      return InvalidArgumentError(StrCat("partition ", d, " holds ", shards[d].shape().ToString(),
                                         " where its shard of ", global_shape.ToString(), " under ",
                                         sharding.ToString(), " is ", local_shape.ToString()));
    }
  }
  if (sharding.IsMaximal()) return shards[sharding.maximal_device()];
  Literal global(global_shape);
  size_t width = ElementBytes(global);
  if (width == 0) return global;
  std::vector<bool> written(global.element_count(), false);
  for (size_t d = 0; d < shards.size(); ++d) {
    ShardExtent extent = DeviceShardExtent(global_shape, sharding, static_cast<int64_t>(d));
    Status agreed = Ok();
    ForEachShardElement(global_shape, local_shape, extent, [&](int64_t g, int64_t l) {
      uint8_t* to = global.mutable_data().data() + g * width;
      const uint8_t* from = shards[d].data().data() + l * width;
      if (!written[g]) {
        std::memcpy(to, from, width);
        written[g] = true;
      } else if (agreed && std::memcmp(to, from, width) != 0) {
        agreed = InvalidArgumentError(StrCat("partition ", d, " disagrees with another replica of its tile at ",
                                             "element ", g, " of ", global_shape.ToString()));
      }
    });
    KILN_RETURN_IF_ERROR(agreed);
  }
  return global;
}

}  // namespace

Result<std::vector<Literal>> SplitLiteral(const Literal& global, const HloSharding& sharding,
                                          int64_t num_devices) {
  if (global.shape().IsTuple()) {
    KILN_RETURN_IF_ERROR(sharding.Validate(global.shape(), num_devices));
    std::vector<std::vector<Literal>> elements(num_devices);
    for (size_t i = 0; i < global.tuple_elements().size(); ++i) {
      HloSharding element_sharding = sharding.TupleElement(global.shape(), static_cast<int64_t>(i));
      KILN_ASSIGN_OR_RETURN(std::vector<Literal> parts,
                            SplitLiteral(global.tuple_elements()[i], element_sharding, num_devices));
      for (int64_t d = 0; d < num_devices; ++d) elements[d].push_back(std::move(parts[d]));
    }
    std::vector<Literal> out;
    for (auto& e : elements) out.push_back(Literal::Tuple(std::move(e)));
    return out;
  }
  if (sharding.IsManual() || sharding.HasManualSubgroup()) {
    return InvalidArgumentError("a manually sharded value cannot be split from a global one");
  }
  KILN_RETURN_IF_ERROR(sharding.Validate(global.shape(), num_devices));
  std::vector<Literal> out;
  for (int64_t d = 0; d < num_devices; ++d) {
    if (!sharding.IsTiled()) {
      out.push_back(global);
      continue;
    }
    KILN_ASSIGN_OR_RETURN(Literal shard, ArrayShard(global, sharding, d));
    out.push_back(std::move(shard));
  }
  return out;
}

Result<Literal> AssembleLiteral(std::span<const Literal> shards, const Shape& global_shape,
                                const HloSharding& sharding) {
  if (shards.empty()) return InvalidArgumentError("no shards to assemble");
  int64_t num_devices = static_cast<int64_t>(shards.size());
  KILN_RETURN_IF_ERROR(sharding.Validate(global_shape, num_devices));
  if (!global_shape.IsTuple()) return AssembleArray(shards, global_shape, sharding);
  std::vector<Literal> elements;
  for (size_t i = 0; i < global_shape.tuple_shapes().size(); ++i) {
    const Shape& element_shape = global_shape.tuple_shapes(i);
    std::vector<Literal> parts;
    for (const Literal& shard : shards) {
      if (!shard.shape().IsTuple() || shard.tuple_elements().size() != global_shape.tuple_shapes().size()) {
        return InvalidArgumentError(StrCat("a shard of ", shard.shape().ToString(), " for the tuple ",
                                           global_shape.ToString()));
      }
      parts.push_back(shard.tuple_elements()[i]);
    }
    Result<Literal> element =
        AssembleLiteral(parts, element_shape, sharding.TupleElement(global_shape, static_cast<int64_t>(i)));
    if (!element) return element.error().WithContext(StrCat("tuple element ", i));
    elements.push_back(std::move(*element));
  }
  return Literal::Tuple(std::move(elements));
}

}  // namespace kiln::hlo
