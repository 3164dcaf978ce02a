// cholesky and triangular-solve over batches of matrices (the two minor
// dimensions), with Eigen. Values are computed in double (or complex
// double) and rounded once to the result type.
//
// cholesky reads only the `lower` (or upper) triangle of each matrix and
// writes zeros to the other one; a matrix that is not positive definite
// gives NaN everywhere, as XLA's expander does. triangular-solve reads the
// `lower` (or upper) triangle of a, takes its diagonal as ones when
// unit_diagonal is set, and solves op(a) x = b (left_side) or x op(a) = b
// with op from transpose_a (NO_TRANSPOSE, TRANSPOSE, ADJOINT).
#include <Eigen/Dense>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {
namespace {

template <typename T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

bool IsFloatingOrComplex(hlo::PrimitiveType t) {
  const ComputeType c = ComputeTypeFor(t);
  return c == ComputeType::kF32 || c == ComputeType::kF64 || c == ComputeType::kC64 ||
         c == ComputeType::kC128;
}

// Rows and columns of the matrices of `shape` and how many there are.
struct Batch {
  int64_t count = 1;
  int64_t rows = 0;
  int64_t cols = 0;
};

Result<Batch> MatrixBatch(const hlo::Instruction& instr, const hlo::Shape& shape) {
  if (shape.rank() < 2) return KernelError(instr, "operands must have rank 2 or more");
  Batch b;
  for (int64_t d = 0; d + 2 < shape.rank(); ++d) b.count *= shape.dimensions(d);
  b.rows = shape.dimensions(shape.rank() - 2);
  b.cols = shape.dimensions(shape.rank() - 1);
  return b;
}

template <typename T>
Matrix<T> LoadMatrix(const std::vector<T>& values, int64_t index, int64_t rows, int64_t cols) {
  return Eigen::Map<const Matrix<T>>(values.data() + index * rows * cols, rows, cols);
}

template <typename T>
void StoreMatrix(const Matrix<T>& m, int64_t index, std::vector<T>& values) {
  Eigen::Map<Matrix<T>>(values.data() + index * m.rows() * m.cols(), m.rows(), m.cols()) = m;
}

template <typename T>
hlo::Literal CholeskyTyped(const hlo::Literal& a, const hlo::Shape& shape, const Batch& batch,
                           bool lower) {
  std::vector<T> values = ElementsAs<T>(a);
  const int64_t n = batch.rows;
  for (int64_t i = 0; i < batch.count; ++i) {
    Matrix<T> m = LoadMatrix(values, i, n, n);
    // Mirror the triangle that is read so that Eigen sees a Hermitian matrix.
    Matrix<T> full = lower ? Matrix<T>(m.template triangularView<Eigen::Lower>())
                           : Matrix<T>(m.template triangularView<Eigen::Upper>());
    if (lower) {
      full.template triangularView<Eigen::StrictlyUpper>() = full.adjoint();
    } else {
      full.template triangularView<Eigen::StrictlyLower>() = full.adjoint();
    }
    Eigen::LLT<Matrix<T>> llt(full);
    Matrix<T> factor;
    if (llt.info() != Eigen::Success) {
      factor = Matrix<T>::Constant(n, n, T(std::numeric_limits<double>::quiet_NaN()));
    } else if (lower) {
      factor = llt.matrixL();
    } else {
      factor = llt.matrixU();
    }
    StoreMatrix(factor, i, values);
  }
  hlo::Literal result(shape);
  StoreElements<T>(values, result);
  return result;
}

struct SolveOptions {
  bool left_side = false;
  bool lower = false;
  bool unit_diagonal = false;
  enum class Op { kNone, kTranspose, kAdjoint } op = Op::kNone;
};

Result<SolveOptions> GetSolveOptions(const hlo::Instruction& instr) {
  SolveOptions o;
  KILN_ASSIGN_OR_RETURN(o.left_side, hlo::GetBoolAttributeOr(instr, "left_side", false));
  KILN_ASSIGN_OR_RETURN(o.lower, hlo::GetBoolAttributeOr(instr, "lower", false));
  KILN_ASSIGN_OR_RETURN(o.unit_diagonal, hlo::GetBoolAttributeOr(instr, "unit_diagonal", false));
  if (instr.FindAttribute("transpose_a") != nullptr) {
    KILN_ASSIGN_OR_RETURN(std::string op, hlo::GetIdentifierAttribute(instr, "transpose_a"));
    if (op == "TRANSPOSE") {
      o.op = SolveOptions::Op::kTranspose;
    } else if (op == "ADJOINT") {
      o.op = SolveOptions::Op::kAdjoint;
    } else if (op != "NO_TRANSPOSE") {
      return KernelError(instr, "unknown transpose_a=" + op);
    }
  }
  return o;
}

template <typename T>
hlo::Literal TriangularSolveTyped(const hlo::Literal& a, const hlo::Literal& b,
                                  const hlo::Shape& shape, const Batch& a_batch,
                                  const Batch& b_batch, const SolveOptions& o) {
  const std::vector<T> a_values = ElementsAs<T>(a);
  std::vector<T> b_values = ElementsAs<T>(b);
  const int64_t m = a_batch.rows;
  for (int64_t i = 0; i < b_batch.count; ++i) {
    Matrix<T> raw = LoadMatrix(a_values, i, m, m);
    // The triangle that is read, with the implied unit diagonal, then op(a).
    Matrix<T> tri = o.lower ? Matrix<T>(raw.template triangularView<Eigen::Lower>())
                            : Matrix<T>(raw.template triangularView<Eigen::Upper>());
    if (o.unit_diagonal) tri.diagonal().setOnes();
    bool lower = o.lower;
    if (o.op == SolveOptions::Op::kTranspose) {
      tri = Matrix<T>(tri.transpose());
      lower = !lower;
    } else if (o.op == SolveOptions::Op::kAdjoint) {
      tri = Matrix<T>(tri.adjoint());
      lower = !lower;
    }
    Matrix<T> rhs = LoadMatrix(b_values, i, b_batch.rows, b_batch.cols);
    Matrix<T> x;
    if (o.left_side) {
      x = lower ? Matrix<T>(tri.template triangularView<Eigen::Lower>().solve(rhs))
                : Matrix<T>(tri.template triangularView<Eigen::Upper>().solve(rhs));
    } else {
      x = lower ? Matrix<T>(
                      tri.template triangularView<Eigen::Lower>().template solve<Eigen::OnTheRight>(
                          rhs))
                : Matrix<T>(
                      tri.template triangularView<Eigen::Upper>().template solve<Eigen::OnTheRight>(
                          rhs));
    }
    StoreMatrix(x, i, b_values);
  }
  hlo::Literal result(shape);
  StoreElements<T>(b_values, result);
  return result;
}

}  // namespace

Result<hlo::Literal> EvalCholesky(const hlo::Instruction& instr, Operands operands,
                                  EvalContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 1));
  const hlo::Shape& shape = instr.shape();
  if (!IsFloatingOrComplex(shape.element_type()) ||
      operands[0]->shape().element_type() != shape.element_type()) {
    return KernelError(instr,
                       "cholesky needs a floating-point or complex operand of the result type");
  }
  KILN_ASSIGN_OR_RETURN(Batch batch, MatrixBatch(instr, operands[0]->shape()));
  if (batch.rows != batch.cols || operands[0]->shape().dimensions() != shape.dimensions()) {
    return KernelError(instr, "cholesky needs square matrices and a result of the operand's shape");
  }
  KILN_RETURN_IF_ERROR(ctx.Charge(batch.count * batch.rows * batch.rows * batch.rows));
  KILN_ASSIGN_OR_RETURN(bool lower, hlo::GetBoolAttributeOr(instr, "lower", false));
  if (hlo::IsComplex(shape.element_type())) {
    return CholeskyTyped<std::complex<double>>(*operands[0], shape, batch, lower);
  }
  return CholeskyTyped<double>(*operands[0], shape, batch, lower);
}

Result<hlo::Literal> EvalTriangularSolve(const hlo::Instruction& instr, Operands operands,
                                         EvalContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 2));
  const hlo::Shape& shape = instr.shape();
  const hlo::Shape& a_shape = operands[0]->shape();
  const hlo::Shape& b_shape = operands[1]->shape();
  if (!IsFloatingOrComplex(shape.element_type()) ||
      a_shape.element_type() != shape.element_type() ||
      b_shape.element_type() != shape.element_type() ||
      b_shape.dimensions() != shape.dimensions()) {
    return KernelError(instr,
                       "triangular-solve needs floating-point or complex a and b of the "
                       "result's type, and b of the result's shape");
  }
  KILN_ASSIGN_OR_RETURN(SolveOptions options, GetSolveOptions(instr));
  KILN_ASSIGN_OR_RETURN(Batch a_batch, MatrixBatch(instr, a_shape));
  KILN_ASSIGN_OR_RETURN(Batch b_batch, MatrixBatch(instr, b_shape));
  const int64_t shared = options.left_side ? b_batch.rows : b_batch.cols;
  if (a_batch.rows != a_batch.cols || a_batch.count != b_batch.count || shared != a_batch.rows) {
    return KernelError(instr, "a " + a_shape.ToString() + " does not fit b " + b_shape.ToString() +
                                  (options.left_side ? " (left side)" : " (right side)"));
  }
  KILN_RETURN_IF_ERROR(ctx.Charge(b_batch.count * a_batch.rows * a_batch.rows *
                                  (options.left_side ? b_batch.cols : b_batch.rows)));
  if (hlo::IsComplex(shape.element_type())) {
    return TriangularSolveTyped<std::complex<double>>(*operands[0], *operands[1], shape, a_batch,
                                                      b_batch, options);
  }
  return TriangularSolveTyped<double>(*operands[0], *operands[1], shape, a_batch, b_batch, options);
}

}  // namespace kiln::runtime
