// Reference implementations of G2BMM and GBMM (banded.h), in double
// accumulators like the other linear operators.
#include "reference/ops/banded.h"

#include "reference/ops/conv_utils.h"
#include "reference/ops/op_utils.h"
#include "reference/ops/ops.h"
#include "support/error.h"

namespace orchid::reference {

bool is_banded_op(const Node& node) {
  return node.domain == kOrchidDomain && (node.op == "G2BMM" || node.op == "GBMM");
}

BandedDims banded_dims(const Node& node, const Shape& a, const Shape& b) {
  BandedDims d;
  d.g2bmm = node.op == "G2BMM";
  if (!node.attrs.has("width")) ORCHID_FAIL() << "attribute 'width' is required";
  d.width = node.attrs.get_int("width", 0);
  d.dilation = node.attrs.get_int("dilation", 1);
  if (d.width < 0) ORCHID_FAIL() << "width must be >= 0, got " << d.width;
  if (d.dilation < 1) ORCHID_FAIL() << "dilation must be >= 1, got " << d.dilation;
  if (a.size() != 3 || b.size() != 3) {
    ORCHID_FAIL() << "inputs must have rank 3, got A " << shape_to_string(a) << " and B " << shape_to_string(b);
  }
  if (a[0] != b[0]) {
    ORCHID_FAIL() << "batch dimensions differ: A " << shape_to_string(a) << ", B " << shape_to_string(b);
  }
  d.batch = a[0], d.m = a[1], d.n = b[1], d.k = b[2];
  if (d.g2bmm && a[2] != b[2]) {
    ORCHID_FAIL() << "row lengths differ: A " << shape_to_string(a) << ", B " << shape_to_string(b);
  }
  if (!d.g2bmm && a[2] != d.band()) {
    ORCHID_FAIL() << "A " << shape_to_string(a) << " must have 2 * width + 1 = " << d.band()
                  << " columns";
  }
  return d;
}

namespace {

std::vector<TensorType> infer_banded(const InferContext& ctx) {
  const TensorType& a = ctx.input(0);
  const TensorType& b = ctx.input(1);
  check_dtype(a.dtype, kFloatTypes, 0, "A");
  if (b.dtype != a.dtype) {
    ORCHID_FAIL() << "input 1 (B) has dtype " << dtype_name(b.dtype) << " but input 0 has " << dtype_name(a.dtype);
  }
  const BandedDims d = banded_dims(ctx.node(), a.shape, b.shape);
  return one(a.dtype, {d.batch, d.m, d.g2bmm ? d.band() : d.k});
}

std::vector<Tensor> eval_banded(const EvalContext& ctx) {
  const BandedDims d = banded_dims(ctx.node, ctx.input(0).shape(), ctx.input(1).shape());
  const std::vector<double> a = to_acc<double>(ctx.input(0));
  const std::vector<double> b = to_acc<double>(ctx.input(1));
  const int64_t cols = d.g2bmm ? d.band() : d.k;
  std::vector<double> c(size_t(d.batch * d.m * cols), 0.0);
  const int64_t a_cols = d.g2bmm ? d.k : d.band();
  for (int64_t bt = 0; bt < d.batch; ++bt) {
    for (int64_t m = 0; m < d.m; ++m) {
      const double* arow = a.data() + (bt * d.m + m) * a_cols;
      double* crow = c.data() + (bt * d.m + m) * cols;
      for (int64_t w = 0; w < d.band(); ++w) {
        const int64_t row = m + d.dilation * (w - d.width);
        if (row < 0 || row >= d.n) continue;
        const double* brow = b.data() + (bt * d.n + row) * d.k;
        if (d.g2bmm) {
          for (int64_t k = 0; k < d.k; ++k) crow[w] += arow[k] * brow[k];
        } else {
          for (int64_t k = 0; k < d.k; ++k) crow[k] += arow[w] * brow[k];
        }
      }
    }
  }
  return {from_acc(c, ctx.output_types[0])};
}

}  // namespace

void register_banded_ops(OpRegistry& registry) {
  registry.add({"G2BMM", kOrchidDomain, infer_banded, eval_banded, 2, 2});
  registry.add({"GBMM", kOrchidDomain, infer_banded, eval_banded, 2, 2});
}

}  // namespace orchid::reference
