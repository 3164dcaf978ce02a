// dot: general matrix product over batch and contracting dimensions, mapped
// onto batched Eigen GEMM ([B, M, K] x [B, K, N] -> [B, M, N]).

#include <Eigen/Core>

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {
namespace {

// An operand's dimensions split into the three roles of a GEMM operand.
struct OperandRoles {
  std::vector<int64_t> batch;
  std::vector<int64_t> rows;  // lhs: free dims (M); rhs: contracting dims (K)
  std::vector<int64_t> cols;  // lhs: contracting dims (K); rhs: free dims (N)
};

// Free dimensions: those that are neither batch nor contracting, in order.
std::vector<int64_t> FreeDims(int64_t rank, std::span<const int64_t> batch,
                              std::span<const int64_t> contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(batch, d) && !Contains(contracting, d)) free.push_back(d);
  }
  return free;
}

Status CheckDimList(const hlo::Instruction& instr, std::string_view what,
                    std::span<const int64_t> dims, int64_t rank) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank) {
      return KernelError(instr, std::string(what) + " " + DimsToString(dims) +
                                    " out of range for rank " + std::to_string(rank));
    }
    for (size_t j = 0; j < i; ++j) {
      if (dims[j] == dims[i]) {
        return KernelError(instr, std::string(what) + " " + DimsToString(dims) + " repeats " +
                                      std::to_string(dims[i]));
      }
    }
  }
  return Ok();
}

int64_t SizeOf(const hlo::Shape& shape, std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= shape.dimensions(d);
  return n;
}

// Arranges `lit` as [batch, rows, cols] or, when that needs no copy, as
// [batch, cols, rows] with transposed = true; read in place when its
// elements are stored as T, else converted (and rearranged) into owned.
template <typename T>
GemmOperand<T> Arrange(const hlo::Literal& lit, const OperandRoles& roles) {
  std::vector<int64_t> row_major = roles.batch, col_major = roles.batch;
  row_major.insert(row_major.end(), roles.rows.begin(), roles.rows.end());
  row_major.insert(row_major.end(), roles.cols.begin(), roles.cols.end());
  col_major.insert(col_major.end(), roles.cols.begin(), roles.cols.end());
  col_major.insert(col_major.end(), roles.rows.begin(), roles.rows.end());
  auto is_identity = [](std::span<const int64_t> perm) {
    for (size_t i = 0; i < perm.size(); ++i) {
      if (perm[i] != static_cast<int64_t>(i)) return false;
    }
    return true;
  };
  const hlo::Shape& shape = lit.shape();
  GemmOperand<T> out;
  out.view.rows = SizeOf(shape, roles.rows);
  out.view.cols = SizeOf(shape, roles.cols);
  const bool as_stored = is_identity(row_major) || is_identity(col_major);
  out.view.transposed = !is_identity(row_major) && as_stored;
  if (as_stored) {
    if (const T* in_place = ElementsInPlace<T>(lit)) {
      out.view.data = in_place;
      return out;
    }
    out.owned = ElementsAs<T>(lit);
  } else {
    out.owned = TransposeRowMajor<T>(ElementsAs<T>(lit), shape.dimensions(), row_major);
  }
  out.view.data = out.owned.data();
  return out;
}

template <typename T>
hlo::Literal ComputeDot(const hlo::Literal& lhs, const hlo::Literal& rhs,
                        const OperandRoles& lhs_roles, const OperandRoles& rhs_roles,
                        int64_t batch, const hlo::Shape& result_shape) {
  const GemmOperand<T> a = Arrange<T>(lhs, lhs_roles);
  const GemmOperand<T> b = Arrange<T>(rhs, rhs_roles);
  hlo::Literal result = hlo::Literal::Uninitialized(result_shape);
  if (T* in_place = MutableElementsInPlace<T>(result)) {
    BatchedGemm(a.view, b.view, batch, in_place);
    return result;
  }
  std::vector<T> c(batch * a.view.rows * b.view.cols);
  BatchedGemm(a.view, b.view, batch, c.data());
  StoreElements<T>(c, result);
  return result;
}

}  // namespace

Result<hlo::Literal> EvalDot(const hlo::Instruction& instr, Operands operands, EvalContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 2));
  KILN_ASSIGN_OR_RETURN(hlo::DotDimensionNumbers dnums, hlo::GetDotDimensionNumbers(instr));
  const hlo::Shape& lhs = operands[0]->shape();
  const hlo::Shape& rhs = operands[1]->shape();
  KILN_RETURN_IF_ERROR(CheckDimList(instr, "lhs_batch_dims", dnums.lhs_batch_dimensions, lhs.rank()));
  KILN_RETURN_IF_ERROR(CheckDimList(instr, "rhs_batch_dims", dnums.rhs_batch_dimensions, rhs.rank()));
  KILN_RETURN_IF_ERROR(
      CheckDimList(instr, "lhs_contracting_dims", dnums.lhs_contracting_dimensions, lhs.rank()));
  KILN_RETURN_IF_ERROR(
      CheckDimList(instr, "rhs_contracting_dims", dnums.rhs_contracting_dimensions, rhs.rank()));
  if (dnums.lhs_batch_dimensions.size() != dnums.rhs_batch_dimensions.size() ||
      dnums.lhs_contracting_dimensions.size() != dnums.rhs_contracting_dimensions.size()) {
    return KernelError(instr, "lhs and rhs have different numbers of batch or contracting dims");
  }
  auto check_pairs = [&](std::span<const int64_t> l, std::span<const int64_t> r,
                         std::string_view what) -> Status {
    for (size_t i = 0; i < l.size(); ++i) {
      if (lhs.dimensions(l[i]) != rhs.dimensions(r[i])) {
        return KernelError(instr, std::string(what) + " dimension " + std::to_string(i) +
                                      " has size " + std::to_string(lhs.dimensions(l[i])) +
                                      " in lhs but " + std::to_string(rhs.dimensions(r[i])) +
                                      " in rhs");
      }
    }
    return Ok();
  };
  KILN_RETURN_IF_ERROR(check_pairs(dnums.lhs_batch_dimensions, dnums.rhs_batch_dimensions, "batch"));
  KILN_RETURN_IF_ERROR(check_pairs(dnums.lhs_contracting_dimensions,
                                   dnums.rhs_contracting_dimensions, "contracting"));

  OperandRoles lhs_roles{dnums.lhs_batch_dimensions,
                         FreeDims(lhs.rank(), dnums.lhs_batch_dimensions,
                                  dnums.lhs_contracting_dimensions),
                         dnums.lhs_contracting_dimensions};
  OperandRoles rhs_roles{dnums.rhs_batch_dimensions, dnums.rhs_contracting_dimensions,
                         FreeDims(rhs.rank(), dnums.rhs_batch_dimensions,
                                  dnums.rhs_contracting_dimensions)};
  const int64_t batch = SizeOf(lhs, lhs_roles.batch);
  const int64_t m = SizeOf(lhs, lhs_roles.rows);
  const int64_t n = SizeOf(rhs, rhs_roles.cols);
  const hlo::Shape& result_shape = instr.shape();
  if (!result_shape.IsArray() || result_shape.ElementCount() != batch * m * n) {
    return KernelError(instr, "result shape " + result_shape.ToString() +
                                  " does not hold batch x lhs free x rhs free = " +
                                  std::to_string(batch * m * n) + " elements");
  }
  KILN_RETURN_IF_ERROR(ctx.Charge(result_shape.ElementCount()));
  return VisitComputeType(result_shape.element_type(), [&]<typename T>(T) {
    return ComputeDot<T>(*operands[0], *operands[1], lhs_roles, rhs_roles, batch, result_shape);
  });
}

}  // namespace kiln::runtime
