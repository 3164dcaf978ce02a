// How a value of an SPMD module is laid out over its partitions: the
// `sharding=` annotation of XLA's HLO text (xla/hlo/ir/hlo_sharding.h).
//
// Forms:
//   {replicated}                      every partition holds the whole value
//   {maximal device=N}                only partition N holds it
//   {manual}                          already per-partition (shard_map bodies)
//   {devices=[a,b]0,1,2,3}            tiled: dimension i is cut into tile_dims[i]
//   {devices=[a,b]<=[n]}              ... with an iota device list,
//   {devices=[a,b]<=[x,y]T(1,0)}      ... reshaped and transposed
//   {devices=[a,b,r]... last_tile_dim_replicate}
//   {devices=[a,b,m,r]... last_tile_dims={manual, replicated}}
//                                     trailing tile dims are subgroups whose
//                                     members hold the same tile
//   {{...}, {...}}                    a tuple: one sharding per leaf of the
//                                     tuple shape, flattened in order
// `metadata={...}`, `shard_as N` and `shard_like N` are accepted and dropped.
//
// A tiled sharding's device list is kept expanded (row-major over
// tile_dims). Plain value: copyable, thread-compatible; functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/instruction.h"
#include "compiler/hlo/shape.h"

namespace kiln::hlo {

// The meaning of a trailing tile dimension of a tiled sharding.
enum class SubgroupType : uint8_t { kReplicated, kManual };

// Device lists longer than this are refused (the corpus's largest slice is
// 64x8 = 512 chips).
inline constexpr int64_t kMaxShardingDevices = int64_t{1} << 16;

class HloSharding {
 public:
  enum class Type : uint8_t { kReplicated, kMaximal, kManual, kTiled, kTuple, kUnknown };

  static HloSharding Replicate() { return HloSharding(Type::kReplicated); }
  static HloSharding Manual() { return HloSharding(Type::kManual); }
  static HloSharding Unknown() { return HloSharding(Type::kUnknown); }
  static HloSharding Maximal(int64_t device);
  // `devices` row-major over `tile_dims`; the last subgroups.size() tile
  // dims are subgroups. A tiled sharding whose data dims are all 1 and
  // whose subgroups are all replicated is returned as Replicate(). Checks
  // only that the sizes agree (Validate checks the rest).
  static Result<HloSharding> Tiled(std::vector<int64_t> tile_dims, std::vector<int64_t> devices,
                                   std::vector<SubgroupType> subgroups = {});
  static HloSharding Tuple(std::vector<HloSharding> elements);
  // The tiled sharding whose device d holds tile index_of_device[d] of a
  // value cut into `counts` tiles, the devices of each tile replicating it
  // (in ascending order). Fails unless every tile has the same number of
  // devices.
  static Result<HloSharding> FromDeviceTiles(const std::vector<int64_t>& counts,
                                             const std::vector<std::vector<int64_t>>& index_of_device);

  Type type() const { return type_; }
  bool IsReplicated() const { return type_ == Type::kReplicated; }
  bool IsMaximal() const { return type_ == Type::kMaximal; }
  bool IsManual() const { return type_ == Type::kManual; }
  bool IsTiled() const { return type_ == Type::kTiled; }
  bool IsTuple() const { return type_ == Type::kTuple; }
  bool IsUnknown() const { return type_ == Type::kUnknown; }
  // Tiled with a manual subgroup (part of the value is in a shard_map).
  bool HasManualSubgroup() const;

  int64_t maximal_device() const { return device_; }
  // Tiled: the full tile assignment (data dims, then subgroup dims).
  const std::vector<int64_t>& tile_dims() const { return tile_dims_; }
  const std::vector<int64_t>& devices() const { return devices_; }
  const std::vector<SubgroupType>& subgroups() const { return subgroups_; }
  // Tiled: the number of data dimensions (the rank of the shapes it fits).
  int64_t data_rank() const;
  const std::vector<HloSharding>& tuple_elements() const { return tuple_; }

  // Tiles per dimension of a rank-`rank` value: tile_dims' data dims when
  // tiled, all 1 otherwise.
  std::vector<int64_t> TileCounts(int64_t rank) const;
  // The tile (per data dimension) device `device` holds of a rank-`rank`
  // value: all 0 unless tiled. Empty when the device is not in a tiled
  // sharding's list.
  std::vector<int64_t> TileIndexOfDevice(int64_t device, int64_t rank) const;

  // The sharding of each leaf of `shape` (one for an array): a tuple
  // sharding's elements, or this sharding repeated.
  std::vector<HloSharding> LeafShardings(const Shape& shape) const;
  // The sharding of element `index` of a value of tuple shape `shape` (a
  // tuple sharding when that element is a tuple).
  HloSharding TupleElement(const Shape& shape, int64_t index) const;

  // Checks that the sharding fits `shape` on `num_devices` partitions:
  // tile rank = shape rank (+ subgroup dims), devices 0..num_devices-1 each
  // exactly once, a maximal device in range, one tuple element per leaf.
  // The error says what does not fit ("tile assignment [2,2] has rank 2
  // but the shape f32[8] has rank 1").
  Status Validate(const Shape& shape, int64_t num_devices) const;

  // Canonical HLO text: "{devices=[2,1]<=[2]}", "{replicated}", ... An
  // iota device list is printed in the `<=[n]` form.
  std::string ToString() const;

  bool operator==(const HloSharding& other) const = default;

 private:
  explicit HloSharding(Type type) : type_(type) {}

  Type type_ = Type::kReplicated;
  int64_t device_ = 0;
  std::vector<int64_t> tile_dims_;
  std::vector<int64_t> devices_;
  std::vector<SubgroupType> subgroups_;
  std::vector<HloSharding> tuple_;
  // Tiled: where each device id below devices_.size() sits in devices_
  // (-1: absent), so finding a device's tile takes constant time.
  std::vector<int64_t> position_;
};

// Leaves of a shape: 1 for an array, the sum over the elements of a tuple.
int64_t ShapeLeafCount(const Shape& shape);

// Parses a sharding's text ("{devices=[2,1]<=[2]}"), spaced as written or
// canonically. The error says what was expected and where.
Result<HloSharding> ParseSharding(std::string_view text);

// The `sharding=` of an instruction, parsed and validated against its shape
// and `num_devices`; nullopt when it has none. Errors name the instruction
// ("instruction %dot: sharding {devices=[2,2]<=[4]}: ...").
Result<std::optional<HloSharding>> InstructionSharding(const Instruction& instruction,
                                                       int64_t num_devices);

// Shard geometry of a tiled dimension of size `dim` cut into `tiles`: every
// shard has ceil(dim / tiles) elements (the last ones padded, as XLA
// pads uneven splits); shard i starts at i * that.
int64_t ShardSize(int64_t dim, int64_t tiles);
// The per-partition (padded) shape of a value of `global` shape (an array)
// under `sharding`: the global shape unless tiled.
Shape ShardShape(const Shape& global, const HloSharding& sharding);
// Where device `device`'s shard starts in each dimension, and how many of
// its elements are real (the rest is padding).
struct ShardExtent {
  std::vector<int64_t> offset;
  std::vector<int64_t> valid;
};
ShardExtent DeviceShardExtent(const Shape& global, const HloSharding& sharding, int64_t device);

}  // namespace kiln::hlo
