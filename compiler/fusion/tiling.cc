#include "compiler/fusion/tiling.h"

#include <algorithm>
#include <limits>

#include "compiler/fusion/block_layout.h"
#include "compiler/fusion/op_class.h"
#include "compiler/hlo/op_attributes.h"
#include "runtime/chip/kernel_indexing.h"
#include "runtime/chip/space_blocks.h"

namespace kiln::fusion {
namespace {

using hlo::Instruction;
using hlo::PrimitiveType;
using hlo::Shape;
using Space = TilingProblem::Space;

// A block extent per space dimension.
using SpaceBlock = std::vector<int64_t>;

class TileBuilder {
 public:
  TileBuilder(const TilingProblem& problem, const TilingOptions& options)
      : problem_(problem),
        options_(options),
        indexing_(problem.anchor == nullptr || problem.space == Space::kUntiled
                      ? runtime::KernelIndexing{}
                      : runtime::IndexKernel(problem.space, problem.anchor, problem.inputs, problem.outputs)) {
    if (indexing_.kind == Space::kUntiled) return;  // no blocks to cut
    for (size_t i = 0; i < problem.inputs.size(); ++i) arrays_.push_back(View(problem.inputs[i], indexing_.inputs[i]));
    for (size_t i = 0; i < problem.outputs.size(); ++i) {
      arrays_.push_back(View(problem.outputs[i], indexing_.outputs[i]));
    }
  }

  int64_t Minimal() {
    if (indexing_.kind == Space::kUntiled) return 0;
    smallest_only_ = true;
    Result<TileChoice> tile = indexing_.kind == Space::kContraction ? ChooseGemm() : ChooseLoop();
    return tile ? tile->vmem_bytes : std::numeric_limits<int64_t>::max();
  }

  Result<TileChoice> Choose() {
    if (indexing_.kind == Space::kUntiled) return TileChoice{};
    if (indexing_.kind == Space::kContraction) return ChooseGemm();
    return ChooseLoop();
  }

  // Every fitting candidate, largest first (Choose's answer first).
  Result<std::vector<TileChoice>> All() {
    std::vector<TileChoice> all;
    all_ = &all;
    Result<TileChoice> first = Choose();
    all_ = nullptr;
    if (!first) return first.error();
    if (all.empty()) all.push_back(*std::move(first));  // untiled
    return all;
  }

 private:
  // One input or output as its blocks are cut: its dimensions, how they
  // follow the space, and how memory tiles them.
  struct ArrayView {
    const Instruction* instr = nullptr;
    const Shape* shape = nullptr;  // nullptr for tokens
    std::vector<int64_t> dims;     // StaticDims
    const runtime::ArrayIndex* index = nullptr;
    std::vector<int64_t> laid;     // dimensions as laid out, extent-1 ones left out
    int64_t minor = -1;            // the lane dimension, or -1
  };

  static ArrayView View(const Instruction* instr, const runtime::ArrayIndex& index) {
    ArrayView v;
    v.instr = instr;
    v.shape = ArrayShapeOf(instr->shape());
    if (v.shape == nullptr) return v;
    v.dims = StaticDims(*v.shape);
    v.index = &index;
    for (int64_t d : runtime::PhysicalOrder(*v.shape)) {
      if (v.shape->dimensions(d) != 1) v.laid.push_back(d);
    }
    const std::vector<int64_t> tiled = runtime::TiledDimensions(*v.shape);
    if (!tiled.empty()) v.minor = tiled.back();
    return v;
  }

  // The block of array `a` for a space block: each dimension takes what the
  // mapping says (runtime/chip/kernel_indexing.h), a dimension it cannot
  // place whole. The minor dimension as laid out must be whole or
  // lane-aligned. Bytes padded as PaddedBlockBytes pads them.
  static void CutBlock(const ArrayView& a, const SpaceBlock& blocks, std::vector<int64_t>& out) {
    const bool mapped = a.index->size() == a.dims.size();
    out.resize(a.dims.size());
    for (size_t d = 0; d < a.dims.size(); ++d) {
      const int64_t block = mapped ? std::min(a.dims[d], runtime::DimBlock((*a.index)[d], a.dims[d], blocks)) : a.dims[d];
      out[d] = std::max<int64_t>(block, 1);  // a zero-sized array still has one (empty) block
    }
    if (a.minor >= 0) {
      int64_t& lanes = out[a.minor];
      if (lanes < a.dims[a.minor] && lanes % kLanes != 0) lanes = a.dims[a.minor];
    }
  }

  static int64_t CutBytes(const ArrayView& a, const std::vector<int64_t>& block, std::vector<int64_t>& scratch) {
    scratch.clear();
    for (int64_t d : a.laid) scratch.push_back(block[d]);
    return PaddedBytes(scratch, a.shape->element_type());
  }

  BlockShape Block(const ArrayView& a, const SpaceBlock& blocks) const {
    BlockShape out;
    out.instruction = a.instr->index_in_parent();
    if (a.shape == nullptr) return out;
    CutBlock(a, blocks, out.dimensions);
    std::vector<int64_t> scratch;
    out.bytes = CutBytes(a, out.dimensions, scratch);
    return out;
  }

  // VMEM of a space block (Evaluate's vmem_bytes without the blocks).
  int64_t VmemOf(const SpaceBlock& blocks, int64_t accumulator_bytes) const {
    std::vector<int64_t> block, scratch;
    int64_t total = 0;
    for (const ArrayView& a : arrays_) {
      if (a.shape == nullptr) continue;
      CutBlock(a, blocks, block);
      total = SatAdd(total, CutBytes(a, block, scratch));
    }
    return SatAdd(SatMul(total, 2), accumulator_bytes);
  }

  // Blocks and VMEM of every input and output for a space block.
  TileChoice Evaluate(const SpaceBlock& blocks, int64_t accumulator_bytes) const {
    TileChoice tile;
    tile.tiled = true;
    int64_t total = 0;
    for (size_t i = 0; i < arrays_.size(); ++i) {
      std::vector<BlockShape>& list = i < problem_.inputs.size() ? tile.inputs : tile.outputs;
      list.push_back(Block(arrays_[i], blocks));
      total = SatAdd(total, list.back().bytes);
    }
    for (size_t i = 0; i < blocks.size(); ++i) tile.grid.push_back(CeilDiv(indexing_.extents[i], blocks[i]));
    tile.accumulator_bytes = accumulator_bytes;
    tile.vmem_bytes = SatAdd(SatMul(total, 2), accumulator_bytes);
    return tile;
  }

  // kReduce: f32 accumulators for the reduce's kept dimensions.
  int64_t ReduceAccumulator(const SpaceBlock& blocks) const {
    if (indexing_.kind != Space::kReduce) return 0;
    std::vector<int64_t> kept;
    for (size_t s = 0; s < blocks.size(); ++s) {
      if (!indexing_.sequential[s]) kept.push_back(blocks[s]);
    }
    return PaddedBytes(kept, PrimitiveType::kF32);
  }

  // Loop and reduce spaces: every combination of candidate blocks on the
  // blockable dimensions with every contiguous stack of the stacked ones
  // (runtime/chip/space_blocks.h), largest first.
  Result<TileChoice> ChooseLoop() {
    const std::vector<int64_t>& space = indexing_.extents;
    const size_t rank = space.size();
    std::vector<std::vector<int64_t>> options(rank, std::vector<int64_t>{1});
    for (size_t s = 0; s < rank; ++s) {
      if (indexing_.stacked[s]) options[s] = Candidates(space[s], 1, space[s]);
      if (!indexing_.blockable[s]) continue;
      options[s] = indexing_.align[s] >= kLanes ? Candidates(space[s], kLanes, 4096)
                                                : Candidates(space[s], indexing_.align[s], 1024);
    }
    std::vector<SpaceBlock> order;
    if (smallest_only_) {
      SpaceBlock smallest;
      for (size_t s = 0; s < rank; ++s) smallest.push_back(indexing_.stacked[s] ? 1 : options[s].back());
      order.push_back(std::move(smallest));
    } else {
      order = runtime::SpaceBlocks(space, options, indexing_.stacked);
      auto volume = [](const SpaceBlock& b) {
        int64_t v = 1;
        for (int64_t e : b) v = SatMul(v, e);
        return v;
      };
      std::stable_sort(order.begin(), order.end(),
                       [&](const SpaceBlock& a, const SpaceBlock& b) { return volume(a) > volume(b); });
    }
    int64_t smallest = 0;
    for (const SpaceBlock& blocks : order) {
      const int64_t accumulator = ReduceAccumulator(blocks);
      const int64_t vmem = VmemOf(blocks, accumulator);
      if (smallest_only_) {
        TileChoice tile;
        tile.vmem_bytes = vmem;
        return tile;
      }
      if (vmem <= options_.scoped_vmem_bytes) {
        TileChoice tile = Evaluate(blocks, accumulator);
        if (all_ == nullptr) return tile;
        all_->push_back(std::move(tile));
        continue;
      }
      smallest = vmem;
    }
    if (all_ != nullptr && !all_->empty()) return all_->front();
    return TooBig(smallest);
  }

  Result<TileChoice> ChooseGemm() {
    const Instruction& op = *problem_.anchor;
    const int64_t m = indexing_.extents[runtime::KernelIndexing::kM];
    const int64_t n = indexing_.extents[runtime::KernelIndexing::kN];
    const int64_t k = indexing_.extents[runtime::KernelIndexing::kK];
    int64_t mxu = std::max<int64_t>(options_.mxu_size, kLanes);
    std::vector<int64_t> bms = Candidates(m, mxu, 1024);
    std::vector<int64_t> bns = Candidates(n, mxu, 1024);
    std::vector<int64_t> bks = Candidates(k, mxu, 2048);
    struct Option {
      int64_t bm, bn, bk;
    };
    std::vector<Option> order;
    for (int64_t bm : bms) {
      for (int64_t bn : bns) {
        for (int64_t bk : bks) order.push_back({bm, bn, bk});
      }
    }
    std::stable_sort(order.begin(), order.end(), [](const Option& a, const Option& b) {
      if (a.bm * a.bn != b.bm * b.bn) return a.bm * a.bn > b.bm * b.bn;
      return a.bk > b.bk;
    });
    if (smallest_only_) order.erase(order.begin(), order.end() - 1);
    // A convolution's operands are read as GEMM panels (its window is built
    // in VMEM); a dot's follow the mapping like every other array.
    const bool convolution = op.opcode() == hlo::Opcode::kConvolution;
    const Instruction* lhs = op.operand(0);
    const Instruction* rhs = op.operand(1);
    TileChoice smallest;
    for (const Option& o : order) {
      int64_t accumulator = PaddedBytes({o.bm, o.bn}, PrimitiveType::kF32);
      TileChoice tile = Evaluate({1, o.bm, o.bn, o.bk}, accumulator);
      int64_t replaced = 0, added = 0;
      for (size_t i = 0; convolution && i < problem_.inputs.size(); ++i) {
        const Instruction* in = problem_.inputs[i];
        if (in != lhs && in != rhs) continue;
        BlockShape& b = tile.inputs[i];
        replaced = SatAdd(replaced, b.bytes);
        const Shape* s = ArrayShapeOf(in->shape());
        PrimitiveType type = s != nullptr ? s->element_type() : PrimitiveType::kF32;
        b.dimensions =
            in == lhs ? std::vector<int64_t>{o.bm, o.bk} : std::vector<int64_t>{o.bk, o.bn};
        b.bytes = PaddedBytes(b.dimensions, type);
        added = SatAdd(added, b.bytes);
      }
      if (tile.vmem_bytes < std::numeric_limits<int64_t>::max()) {
        tile.vmem_bytes = SatAdd(tile.vmem_bytes - 2 * replaced, SatMul(added, 2));
      }
      if (smallest_only_ || tile.vmem_bytes <= options_.scoped_vmem_bytes) {
        if (all_ == nullptr || smallest_only_) return tile;
        all_->push_back(std::move(tile));
        continue;
      }
      smallest = std::move(tile);
    }
    // The tuner's candidates also stack whole GEMMs of consecutive batch
    // entries in one block (ChooseTile keeps one entry per block): fewer
    // grid steps, and the MXUs a small GEMM leaves idle take the next
    // entries' weight tiles.
    const int64_t batch = indexing_.extents[runtime::KernelIndexing::kBatch];
    if (all_ != nullptr && !convolution && batch > 1) {
      for (int64_t bb : Candidates(batch, 2, batch)) {
        if (bb < 2) continue;
        TileChoice tile = Evaluate({bb, m, n, k}, SatMul(bb, PaddedBytes({m, n}, PrimitiveType::kF32)));
        if (tile.vmem_bytes <= options_.scoped_vmem_bytes) all_->push_back(std::move(tile));
      }
    }
    if (all_ != nullptr && !all_->empty()) return all_->front();
    return TooBig(smallest.vmem_bytes);
  }

  Error TooBig(int64_t needed) const {
    return ResourceExhaustedError("kernel of " + Describe(*problem_.anchor) + " needs " + FormatBytes(needed) +
                                  " of VMEM even with the smallest blocks, scoped VMEM is " +
                                  FormatBytes(options_.scoped_vmem_bytes));
  }

  const TilingProblem& problem_;
  const TilingOptions& options_;
  const runtime::KernelIndexing indexing_;
  std::vector<ArrayView> arrays_;  // the inputs, then the outputs
  bool smallest_only_ = false;
  std::vector<TileChoice>* all_ = nullptr;  // All(): collects every fitting tile
};

}  // namespace

TilingProblem MakeTilingProblem(const hlo::Computation& computation, const Kernel& kernel) {
  TilingProblem problem;
  const auto& instrs = computation.instructions();
  auto at = [&](int64_t i) -> const Instruction* { return instrs[i].get(); };
  for (int64_t i : kernel.inputs) problem.inputs.push_back(at(i));
  for (int64_t i : kernel.roots) problem.outputs.push_back(at(i));
  const Instruction* contraction = nullptr;
  const Instruction* reduce = nullptr;
  bool opaque = false;
  for (int64_t i : kernel.instructions) {
    switch (ClassOf(*at(i))) {
      case OpClass::kContraction:
        contraction = at(i);
        break;
      case OpClass::kReduce:
        reduce = at(i);
        break;
      case OpClass::kOpaque:
        opaque = true;
        break;
      default:
        break;
    }
  }
  if (kernel.kind == KernelKind::kHorizontal) {
    problem.whole = true;  // parts of different shapes share no grid
    return problem;
  }
  if (kernel.kind == KernelKind::kGiven) {
    problem.space = TilingProblem::Space::kLoop;
    problem.anchor = at(kernel.roots.front());
    return problem;
  }
  if (opaque || kernel.roots.empty()) return problem;
  if (contraction != nullptr) {
    problem.space = TilingProblem::Space::kContraction;
    problem.anchor = contraction;
  } else if (reduce != nullptr) {
    problem.space = TilingProblem::Space::kReduce;
    problem.anchor = reduce;
  } else {
    problem.space = TilingProblem::Space::kLoop;
    problem.anchor = at(kernel.roots.front());
    for (int64_t r : kernel.roots) {
      if (at(r)->shape().ElementCount() > problem.anchor->shape().ElementCount()) {
        problem.anchor = at(r);
      }
    }
  }
  return problem;
}

namespace {

// Every array the kernel reads or writes, whole and padded to tiles.
int64_t WholeArrayBytes(const TilingProblem& problem) {
  int64_t whole = 0;
  for (const auto* list : {&problem.inputs, &problem.outputs}) {
    for (const Instruction* instr : *list) {
      if (const Shape* shape = ArrayShapeOf(instr->shape())) {
        whole = SatAdd(whole, PaddedBlockBytes(*shape, StaticDims(*shape)));
      }
    }
  }
  return whole;
}

// The untiled choice of a whole (horizontal) problem.
Result<TileChoice> WholeTile(const TilingProblem& problem, const TilingOptions& options) {
  TileChoice tile;
  tile.vmem_bytes = WholeArrayBytes(problem);
  if (tile.vmem_bytes > options.scoped_vmem_bytes) {
    return InvalidArgumentError("a horizontal kernel needs " + FormatBytes(tile.vmem_bytes) +
                                " of VMEM for its whole arrays, scoped VMEM is " +
                                FormatBytes(options.scoped_vmem_bytes));
  }
  return tile;
}

}  // namespace

Result<TileChoice> ChooseTile(const TilingProblem& problem, const TilingOptions& options) {
  if (problem.whole) return WholeTile(problem, options);
  return TileBuilder(problem, options).Choose();
}

Result<std::vector<TileChoice>> TileCandidates(const TilingProblem& problem,
                                               const TilingOptions& options) {
  if (problem.whole) {
    KILN_ASSIGN_OR_RETURN(TileChoice tile, WholeTile(problem, options));
    return std::vector<TileChoice>{std::move(tile)};
  }
  return TileBuilder(problem, options).All();
}

int64_t MinimalVmemBytes(const TilingProblem& problem, const TilingOptions& options) {
  if (problem.whole) return WholeArrayBytes(problem);
  return TileBuilder(problem, options).Minimal();
}

bool FitsScopedVmem(const TilingProblem& problem, const TilingOptions& options, int64_t* needed) {
  if (problem.whole) {
    const int64_t whole = WholeArrayBytes(problem);
    if (whole <= options.scoped_vmem_bytes) return true;
    if (needed != nullptr) *needed = whole;
    return false;
  }
  if (problem.space == Space::kLoop || problem.space == Space::kReduce) {
    // No block is larger than its whole array, padded alike; a reduce's
    // accumulators cover at most its kept dimensions.
    int64_t whole = SatMul(WholeArrayBytes(problem), 2);
    bool bounded = true;
    if (problem.space == Space::kReduce) {
      const Shape* operand = problem.anchor != nullptr && problem.anchor->operand_count() > 0
                                 ? ArrayShapeOf(problem.anchor->operand(0)->shape())
                                 : nullptr;
      Result<std::vector<int64_t>> reduced = hlo::GetDimensions(*problem.anchor);
      bounded = operand != nullptr && reduced.has_value();
      if (bounded) {
        std::vector<int64_t> kept;
        const std::vector<int64_t> dims = StaticDims(*operand);
        for (size_t d = 0; d < dims.size(); ++d) {
          if (std::find(reduced->begin(), reduced->end(), static_cast<int64_t>(d)) == reduced->end()) {
            kept.push_back(dims[d]);
          }
        }
        whole = SatAdd(whole, PaddedBytes(kept, PrimitiveType::kF32));
      }
    }
    if (bounded && whole <= options.scoped_vmem_bytes) return true;
  }
  const int64_t vmem = MinimalVmemBytes(problem, options);
  if (vmem <= options.scoped_vmem_bytes) return true;
  if (needed != nullptr) *needed = vmem;
  return false;
}

Status ValidateTile(const TilingProblem& problem, const TileChoice& tile,
                    const TilingOptions& options) {
  if (problem.whole) {
    KILN_ASSIGN_OR_RETURN(TileChoice want, WholeTile(problem, options));
    if (tile != want) {
      return InvalidArgumentError("a horizontal kernel runs untiled on whole arrays (" +
                                  FormatBytes(want.vmem_bytes) + " of VMEM); its tile says otherwise");
    }
    return Ok();
  }
  if (!tile.tiled) return Ok();
  if (tile.inputs.size() != problem.inputs.size() ||
      tile.outputs.size() != problem.outputs.size()) {
    return InvalidArgumentError("tile has " + std::to_string(tile.inputs.size()) + " input and " +
                                std::to_string(tile.outputs.size()) + " output blocks, kernel has " +
                                std::to_string(problem.inputs.size()) + " inputs and " +
                                std::to_string(problem.outputs.size()) + " outputs");
  }
  int64_t total = 0;
  auto check = [&](const Instruction* instr, const BlockShape& block) -> Status {
    const Shape* shape = ArrayShapeOf(instr->shape());
    if (shape == nullptr) return Ok();
    for (int64_t d : block.dimensions) {
      if (d <= 0) {
        return InvalidArgumentError("block of %" + std::string(instr->name()) +
                                    " has a non-positive dimension");
      }
    }
    int64_t rank = static_cast<int64_t>(block.dimensions.size());
    bool gemm_operand =
        problem.space == Space::kContraction && problem.anchor != nullptr &&
        problem.anchor->opcode() == hlo::Opcode::kConvolution && problem.anchor->operand_count() >= 2 &&
        (instr == problem.anchor->operand(0) || instr == problem.anchor->operand(1));
    const std::vector<int64_t> tiled = runtime::TiledDimensions(*shape);
    if (!tiled.empty() && !gemm_operand && rank == shape->rank()) {
      const int64_t minor = tiled.back();
      int64_t lanes = block.dimensions[minor];
      bool whole = lanes >= StaticDims(*shape)[minor];
      if (!whole && lanes % kLanes != 0) {
        return InvalidArgumentError("block of %" + std::string(instr->name()) + ": minor dimension " +
                                    std::to_string(lanes) + " is neither whole nor a multiple of 128");
      }
    }
    int64_t bytes = PaddedBlockBytes(*shape, block.dimensions);
    if (bytes != block.bytes) {
      return InvalidArgumentError("block of %" + std::string(instr->name()) + " says " +
                                  std::to_string(block.bytes) + " bytes, its padded size is " +
                                  std::to_string(bytes));
    }
    total = SatAdd(total, bytes);
    return Ok();
  };
  for (size_t i = 0; i < tile.inputs.size(); ++i) {
    KILN_RETURN_IF_ERROR(check(problem.inputs[i], tile.inputs[i]));
  }
  for (size_t i = 0; i < tile.outputs.size(); ++i) {
    KILN_RETURN_IF_ERROR(check(problem.outputs[i], tile.outputs[i]));
  }
  int64_t vmem = SatAdd(SatMul(total, 2), tile.accumulator_bytes);
  if (vmem != tile.vmem_bytes) {
    return InvalidArgumentError("tile says " + FormatBytes(tile.vmem_bytes) + " of VMEM, its blocks need " +
                                FormatBytes(vmem));
  }
  if (vmem > options.scoped_vmem_bytes) {
    return ResourceExhaustedError("tile needs " + FormatBytes(vmem) + " of VMEM, scoped VMEM is " +
                                  FormatBytes(options.scoped_vmem_bytes));
  }
  return Ok();
}

}  // namespace kiln::fusion
