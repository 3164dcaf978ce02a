#include "compiler/fusion/tiling.h"

#include <algorithm>
#include <limits>

#include "compiler/fusion/block_layout.h"
#include "compiler/fusion/op_class.h"
#include "compiler/hlo/op_attributes.h"

namespace kiln::fusion {
namespace {

using hlo::Instruction;
using hlo::PrimitiveType;
using hlo::Shape;
using Space = TilingProblem::Space;

class TileBuilder {
 public:
  TileBuilder(const TilingProblem& problem, const TilingOptions& options)
      : problem_(problem), options_(options) {
    if (problem.space == Space::kReduce && problem.anchor != nullptr &&
        problem.anchor->operand_count() > 0) {
      reduced_.assign(std::max<int64_t>(problem.anchor->operand(0)->shape().rank(), 0), false);
      Result<std::vector<int64_t>> reduced = hlo::GetDimensions(*problem.anchor);
      if (reduced) {
        for (int64_t d : *reduced) {
          if (d >= 0 && d < static_cast<int64_t>(reduced_.size())) reduced_[d] = true;
        }
      }
    }
  }

  int64_t Minimal() {
    if (problem_.space == Space::kUntiled || problem_.anchor == nullptr) return 0;
    smallest_only_ = true;
    Result<TileChoice> tile = problem_.space == Space::kContraction ? ChooseGemm() : ChooseLoop();
    return tile ? tile->vmem_bytes : std::numeric_limits<int64_t>::max();
  }

  Result<TileChoice> Choose() {
    if (problem_.space == Space::kUntiled || problem_.anchor == nullptr) return TileChoice{};
    if (problem_.space == Space::kContraction) return ChooseGemm();
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
  // Largest sublane tile among the arrays: blocks must align for all.
  int64_t Sublane() const {
    int64_t sub = runtime::kVectorSublanes;
    for (const auto* list : {&problem_.inputs, &problem_.outputs}) {
      for (const Instruction* instr : *list) {
        if (const Shape* s = ArrayShapeOf(instr->shape())) {
          sub = std::max(sub, SublaneTile(s->element_type()));
        }
      }
    }
    return sub;
  }

  const Shape* SpaceShape() const {
    if (problem_.space == Space::kReduce && problem_.anchor->operand_count() > 0) {
      return ArrayShapeOf(problem_.anchor->operand(0)->shape());
    }
    return ArrayShapeOf(problem_.anchor->shape());
  }

  BlockShape Block(const Instruction* instr, const std::vector<int64_t>& space,
                   const std::vector<int64_t>& block, bool is_output) const {
    BlockShape out;
    out.instruction = instr->index_in_parent();
    const Shape* shape = ArrayShapeOf(instr->shape());
    if (shape == nullptr) return out;
    std::vector<int64_t> dims = StaticDims(*shape);
    if (is_output && problem_.space == Space::kReduce && instr == problem_.anchor) {
      // Kept dimensions of the reduce follow the space's blocks.
      for (size_t d = 0; d < space.size() && d < reduced_.size(); ++d) {
        if (!reduced_[d]) out.dimensions.push_back(block[d]);
      }
      if (out.dimensions.size() != dims.size()) out.dimensions = dims;
    } else {
      out.dimensions = AlignedBlock(dims, space, block);
    }
    // A minor block dimension must be whole or lane-aligned; blocks mapped
    // from a non-minor dimension of the space are widened to the whole.
    if (!out.dimensions.empty() && out.dimensions.size() == dims.size()) {
      int64_t& lanes = out.dimensions.back();
      if (lanes < dims.back() && lanes % kLanes != 0) lanes = dims.back();
    }
    out.bytes = PaddedBytes(out.dimensions, shape->element_type());
    return out;
  }

  // Block(...).bytes without building the block (the candidate search).
  int64_t BlockBytes(const Instruction* instr, const std::vector<int64_t>& space,
                     const std::vector<int64_t>& block, bool is_output) const {
    const Shape* shape = ArrayShapeOf(instr->shape());
    if (shape == nullptr) return 0;
    if (is_output && problem_.space == Space::kReduce && instr == problem_.anchor) {
      return Block(instr, space, block, is_output).bytes;
    }
    const std::vector<int64_t>& raw = shape->dimensions();
    int64_t rank = static_cast<int64_t>(raw.size());
    int64_t space_rank = static_cast<int64_t>(space.size());
    int64_t sub = SublaneTile(shape->element_type());
    int64_t elements = 1;
    for (int64_t i = 1; i <= rank; ++i) {
      int64_t d = rank - i;
      int64_t s = space_rank - i;
      int64_t dim = std::max<int64_t>(raw[d], raw[d] == hlo::kUnboundedDim ? 1 : 0);
      int64_t b = s >= 0 && dim == space[s] ? block[s] : (i <= 2 ? dim : 1);
      if (i == 1 && b < dim && b % kLanes != 0) b = dim;
      b = std::max<int64_t>(b, 1);
      if (rank == 1) {
        b = RoundUp(b, sub * kLanes);
      } else if (i == 1) {
        b = RoundUp(b, kLanes);
      } else if (i == 2) {
        b = RoundUp(b, sub);
      }
      elements = SatMul(elements, b);
    }
    if (rank == 0) elements = sub * kLanes;
    return SatMul(elements, std::max(hlo::HostByteWidth(shape->element_type()), 1));
  }

  // VMEM of a space block: every input and output block, double-buffered.
  int64_t VmemOf(const std::vector<int64_t>& space, const std::vector<int64_t>& block,
                 int64_t accumulator_bytes) const {
    int64_t total = 0;
    for (const Instruction* instr : problem_.inputs) {
      total = SatAdd(total, BlockBytes(instr, space, block, /*is_output=*/false));
    }
    for (const Instruction* instr : problem_.outputs) {
      total = SatAdd(total, BlockBytes(instr, space, block, /*is_output=*/true));
    }
    return SatAdd(SatMul(total, 2), accumulator_bytes);
  }

  // Blocks and VMEM of every input/output for a space block.
  TileChoice Evaluate(const std::vector<int64_t>& space, const std::vector<int64_t>& block,
                      int64_t accumulator_bytes) const {
    TileChoice tile;
    tile.tiled = true;
    int64_t total = 0;
    for (const Instruction* instr : problem_.inputs) {
      tile.inputs.push_back(Block(instr, space, block, /*is_output=*/false));
      total = SatAdd(total, tile.inputs.back().bytes);
    }
    for (const Instruction* instr : problem_.outputs) {
      tile.outputs.push_back(Block(instr, space, block, /*is_output=*/true));
      total = SatAdd(total, tile.outputs.back().bytes);
    }
    for (size_t i = 0; i < space.size(); ++i) tile.grid.push_back(CeilDiv(space[i], block[i]));
    tile.accumulator_bytes = accumulator_bytes;
    tile.vmem_bytes = SatAdd(SatMul(total, 2), accumulator_bytes);
    return tile;
  }

  int64_t ReduceAccumulator(const std::vector<int64_t>& space,
                            const std::vector<int64_t>& block) const {
    if (problem_.space != Space::kReduce) return 0;
    BlockShape out = Block(problem_.anchor, space, block, /*is_output=*/true);
    return PaddedBytes(out.dimensions, PrimitiveType::kF32);
  }

  Result<TileChoice> ChooseLoop() {
    const Shape* shape = SpaceShape();
    if (shape == nullptr) return TileChoice{};
    const std::vector<int64_t> space = StaticDims(*shape);
    int64_t rank = static_cast<int64_t>(space.size());
    int64_t sub = Sublane();
    std::vector<int64_t> rows =
        rank >= 2 ? Candidates(space[rank - 2], sub, 1024) : std::vector<int64_t>{1};
    std::vector<int64_t> lanes =
        rank >= 1 ? Candidates(space[rank - 1], kLanes, 4096) : std::vector<int64_t>{1};
    std::vector<std::pair<int64_t, int64_t>> order;
    for (int64_t r : rows) {
      for (int64_t l : lanes) order.emplace_back(r, l);
    }
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return a.first * a.second > b.first * b.second;
    });
    if (smallest_only_) order.erase(order.begin(), order.end() - 1);
    int64_t smallest = 0;
    std::vector<int64_t> block(rank, 1);
    for (const auto& [r, l] : order) {
      if (rank >= 1) block[rank - 1] = l;
      if (rank >= 2) block[rank - 2] = r;
      int64_t accumulator = ReduceAccumulator(space, block);
      int64_t vmem = VmemOf(space, block, accumulator);
      if (smallest_only_) {
        TileChoice tile;
        tile.vmem_bytes = vmem;
        return tile;
      }
      if (vmem <= options_.scoped_vmem_bytes) {
        TileChoice tile = Evaluate(space, block, accumulator);
        if (tile.vmem_bytes <= options_.scoped_vmem_bytes) {
          if (all_ == nullptr) return tile;
          all_->push_back(std::move(tile));
          continue;
        }
      }
      smallest = vmem;
    }
    if (all_ != nullptr && !all_->empty()) return all_->front();
    return TooBig(smallest);
  }

  Result<TileChoice> ChooseGemm() {
    const Instruction& op = *problem_.anchor;
    GemmDims g = GemmOf(op);
    const Shape* out_shape = ArrayShapeOf(op.shape());
    if (out_shape == nullptr || op.operand_count() < 2) return TileChoice{};
    const std::vector<int64_t> out_dims = StaticDims(*out_shape);
    int64_t mxu = std::max<int64_t>(options_.mxu_size, kLanes);
    std::vector<int64_t> bms = Candidates(g.m, mxu, 1024);
    std::vector<int64_t> bns = Candidates(g.n, mxu, 1024);
    std::vector<int64_t> bks = Candidates(g.k, mxu, 2048);
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
    const Instruction* lhs = op.operand(0);
    const Instruction* rhs = op.operand(1);
    int64_t rank = static_cast<int64_t>(out_dims.size());
    TileChoice smallest;
    for (const Option& o : order) {
      // Epilogue arrays and outputs follow the output block: about bm x bn
      // over the two minor output dimensions, kept whole or tile-aligned
      // (the feature dimension of a convolution need not be minor).
      std::vector<int64_t> block(rank, 1);
      if (rank >= 1) block[rank - 1] = std::min(std::max(o.bn, kLanes), out_dims[rank - 1]);
      if (rank >= 2) block[rank - 2] = std::min(RoundUp(o.bm, 32), out_dims[rank - 2]);
      int64_t accumulator = PaddedBytes({o.bm, o.bn}, PrimitiveType::kF32);
      TileChoice tile = Evaluate(out_dims, block, accumulator);
      // Operands of the contraction are read as GEMM blocks.
      int64_t replaced = 0, added = 0;
      for (size_t i = 0; i < problem_.inputs.size(); ++i) {
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
      tile.grid = {g.batch, CeilDiv(g.m, o.bm), CeilDiv(g.n, o.bn), CeilDiv(g.k, o.bk)};
      if (smallest_only_ || tile.vmem_bytes <= options_.scoped_vmem_bytes) {
        if (all_ == nullptr || smallest_only_) return tile;
        all_->push_back(std::move(tile));
        continue;
      }
      smallest = std::move(tile);
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
  bool smallest_only_ = false;
  std::vector<TileChoice>* all_ = nullptr;  // All(): collects every fitting tile
  std::vector<bool> reduced_;  // kReduce: which space dimensions are reduced
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

Result<TileChoice> ChooseTile(const TilingProblem& problem, const TilingOptions& options) {
  return TileBuilder(problem, options).Choose();
}

Result<std::vector<TileChoice>> TileCandidates(const TilingProblem& problem,
                                               const TilingOptions& options) {
  return TileBuilder(problem, options).All();
}

int64_t MinimalVmemBytes(const TilingProblem& problem, const TilingOptions& options) {
  return TileBuilder(problem, options).Minimal();
}

Status ValidateTile(const TilingProblem& problem, const TileChoice& tile,
                    const TilingOptions& options) {
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
        return InvalidArgumentError("block of %" + instr->name() + " has a non-positive dimension");
      }
    }
    int64_t rank = static_cast<int64_t>(block.dimensions.size());
    bool gemm_operand =
        problem.space == Space::kContraction && problem.anchor != nullptr &&
        problem.anchor->operand_count() >= 2 &&
        (instr == problem.anchor->operand(0) || instr == problem.anchor->operand(1));
    if (rank >= 1 && !gemm_operand) {
      int64_t lanes = block.dimensions[rank - 1];
      bool gemm_view = rank != shape->rank();
      bool whole = !gemm_view && lanes >= StaticDims(*shape)[rank - 1];
      if (!gemm_view && !whole && lanes % kLanes != 0) {
        return InvalidArgumentError("block of %" + instr->name() + ": minor dimension " + std::to_string(lanes) +
                                    " is neither whole nor a multiple of 128");
      }
    }
    int64_t bytes = PaddedBytes(block.dimensions, shape->element_type());
    if (bytes != block.bytes) {
      return InvalidArgumentError("block of %" + instr->name() + " says " + std::to_string(block.bytes) +
                                  " bytes, its padded size is " + std::to_string(bytes));
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
