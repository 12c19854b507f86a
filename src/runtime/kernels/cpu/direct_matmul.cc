// The direct kernel of few-row matrix products (direct_matmul.h).
//
// B [K, N] is packed as panels of kPanel columns, panel p holding
// B[k][p kPanel + j] at [p][k][j] (the last panel padded with zeros). A tile
// is up to kRowTile rows of Y by one panel: kRowTile x 4 vectors of
// accumulators; each step of the sum loads the panel's 4 vectors of row k
// once and broadcasts each row's X[r][k]. One row alone runs two sums (even
// and odd k) so that the additions of one accumulator do not wait on each
// other. The epilogue (bias, then post-ops) runs on each row's panel.
//
// A batched product by a transposed runtime operand (the Transpose a
// prologue of the group, onednn_linear_spec.h), Y[b] = X[b] T[b]^T with
// T[b] [n, k] read in place: each of Y's elements is the dot product of a
// row of X[b] and a row of T[b], so every row of T is read once, whole, and
// its products with the few rows of X are summed across the vector lanes.
// (oneDNN ran Longformer's 8192 products of 1 x 64 by 64 x 129 at a third
// of the bytes' bound.)
#include "runtime/kernels/cpu/direct_matmul.h"

#include <algorithm>
#include <cstring>

#include "runtime/kernels/cpu/linear_epilogue.h"
#include "runtime/kernels/cpu/simd.h"
#include "runtime/shared_constants.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu {

namespace {

using onednn::LinearSpec;
using simd::Vec;

constexpr int64_t kPanel = 64;                    // columns per panel
constexpr int64_t kVecs = kPanel / simd::kLanes;  // vectors per panel row
constexpr int64_t kRowTile = 4;
// Bytes of B below which a thread is not worth waking: a 256 KB share
// takes ~2 us from L2, a parallel region ~1 us.
constexpr int64_t kBytesPerThread = 256 * 1024;

struct MatMulDims {
  int64_t m = 0, k = 0, n = 0;
};

// A MatMul anchor of two matrices (or batches of them) of equal rank with an
// output channel (B not a vector): the forms both kernels take.
bool is_matrix_product(const onednn::LinearAnchor& a) {
  return a.kind == onednn::LinearKind::MatMul && a.src.size() >= 2 && a.weights.size() == a.src.size() &&
         a.channels >= 1;
}

// Y [m, n] = X [m, k] B [k, n] as the canonical product (onednn_linear_spec.cc)
// sees it, when X's and B's leading dimensions are all 1.
std::optional<MatMulDims> dims_of(const onednn::LinearAnchor& a) {
  if (!is_matrix_product(a)) return std::nullopt;
  const size_t rank = a.src.size();
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (a.src[i] != 1 || a.weights[i] != 1) return std::nullopt;
  }
  return MatMulDims{a.src[rank - 2], a.src[rank - 1], a.weights[rank - 1]};
}

// B [k, n] as panels: [panels][k][kPanel], zeros past column n (a Tensor:
// 64-byte aligned, zeroed).
Tensor pack_panels(const std::vector<float>& b, const MatMulDims& d) {
  const int64_t panels = (d.n + kPanel - 1) / kPanel;
  Tensor packed(DType::Float32, {panels, d.k, kPanel});
  float* data = packed.data<float>();
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t col = p * kPanel, cols = std::min(kPanel, d.n - col);
    for (int64_t k = 0; k < d.k; ++k) {
      std::memcpy(data + (p * d.k + k) * kPanel, b.data() + k * d.n + col, size_t(cols) * sizeof(float));
    }
  }
  return packed;
}

class DirectMatMulKernel : public Kernel {
 public:
  DirectMatMulKernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec, const MatMulDims& d)
      : d_(d), panels_((d.n + kPanel - 1) / kPanel), epilogue_(graph, group, spec) {
    x_input_ = int(input_slot(group, spec.anchor.x));
    const ValueId w = spec.anchor.w;
    packed_ = shared_derived<Tensor>(w, "direct matmul panels " + std::to_string(d.k) + "x" + std::to_string(d.n), [&] {
      return std::make_shared<const Tensor>(pack_panels(onednn::constant_values(*graph.value(w).constant), d));
    });
    grain_ = std::max<int64_t>(1, kBytesPerThread / (d_.k * kPanel * 4));
  }

  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[size_t(x_input_)]);
    float* y = static_cast<float*>(args.outputs[0]);
    epilogue_.bind(args);
    parallel_for(panels_, grain_, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        for (int64_t r = 0; r < d_.m; r += kRowTile) {
          switch (std::min(kRowTile, d_.m - r)) {
            case 1: tile<1>(x, p, r, y); break;
            case 2: tile<2>(x, p, r, y); break;
            case 3: tile<3>(x, p, r, y); break;
            default: tile<4>(x, p, r, y); break;
          }
        }
      }
    });
  }

  std::string implementation() const override { return "direct matmul (few rows)"; }
  std::vector<std::span<const std::byte>> weight_buffers() const override {
    return {std::as_bytes(std::span(packed_->data<float>(), size_t(packed_->numel())))};
  }
  bool reads_input_at_run(size_t input) const override {
    return int(input) == x_input_ || epilogue_.reads_input(input);
  }

 private:
  // Rows [r0, r0 + R) of Y at panel p's columns.
  template <int R>
  void tile(const float* x, int64_t p, int64_t r0, float* y) const {
    const float* w = packed_->data<float>() + p * d_.k * kPanel;
    const float* xr = x + r0 * d_.k;
    Vec acc[R][kVecs] = {};
    int64_t k = 0;
    if constexpr (R == 1) {
      Vec odd[kVecs] = {};
      for (; k + 2 <= d_.k; k += 2) {
        const Vec a0 = simd::splat(xr[k]), a1 = simd::splat(xr[k + 1]);
        for (int v = 0; v < kVecs; ++v) {
          acc[0][v] += a0 * simd::load(w + k * kPanel + v * simd::kLanes);
          odd[v] += a1 * simd::load(w + (k + 1) * kPanel + v * simd::kLanes);
        }
      }
      for (int v = 0; v < kVecs; ++v) acc[0][v] += odd[v];
    }
    for (; k < d_.k; ++k) {
      Vec b[kVecs];
      for (int v = 0; v < kVecs; ++v) b[v] = simd::load(w + k * kPanel + v * simd::kLanes);
      for (int r = 0; r < R; ++r) {
        const Vec a = simd::splat(xr[r * d_.k + k]);
        for (int v = 0; v < kVecs; ++v) acc[r][v] += a * b[v];
      }
    }
    const int64_t col = p * kPanel, cols = std::min(kPanel, d_.n - col);
    const float* bias = epilogue_.biases() + col;
    for (int r = 0; r < R; ++r) {
      float* out = y + (r0 + r) * d_.n + col;
      if (cols == kPanel) {
        for (int v = 0; v < kVecs; ++v) {
          simd::store(out + v * simd::kLanes, acc[r][v] + simd::load(bias + v * simd::kLanes));
        }
      } else {
        float row[kPanel];
        for (int v = 0; v < kVecs; ++v) simd::store(row + v * simd::kLanes, acc[r][v]);
        for (int64_t j = 0; j < cols; ++j) out[j] = row[j] + bias[j];
      }
      epilogue_.apply_columns(out, (r0 + r) * d_.n + col, col, cols);
    }
  }

  MatMulDims d_;
  int64_t panels_ = 0;
  int64_t grain_ = 1;  // panels worth a thread
  LinearEpilogue epilogue_;
  int x_input_ = -1;
  std::shared_ptr<const Tensor> packed_;  // pack_panels; shared by the kernels that read the same B
};

// Y [batch, m, n] = X [batch, m, k] T [batch, n, k]^T, T the prologue
// Transpose's row-major input, when the group has that form.
struct DotRowsDims {
  int64_t batch = 1, m = 0, k = 0, n = 0;
};

std::optional<DotRowsDims> dot_rows_dims(const Graph& graph, const onednn::LinearAnchor& a) {
  if (!is_matrix_product(a) || graph.value(a.w).is_constant()) return std::nullopt;
  const size_t rank = a.src.size();
  DotRowsDims d{1, a.src[rank - 2], a.src[rank - 1], a.weights[rank - 1]};
  // T's rows of k, contiguous, batch after batch: [batch..., n, k] row-major.
  int64_t stride = d.k * d.n;
  if (a.weights_strides[rank - 2] != 1 || a.weights_strides[rank - 1] != d.k) return std::nullopt;
  for (size_t i = rank - 2; i-- > 0;) {
    if (a.src[i] != a.weights[i] || (a.weights[i] > 1 && a.weights_strides[i] != stride)) return std::nullopt;
    stride *= a.weights[i];
    d.batch *= a.src[i];
  }
  if (graph.type(a.w).numel() != d.batch * d.n * d.k) return std::nullopt;
  return d;
}

// The sum of v's lanes, by halving.
float lane_sum(simd::Vec v) {
  using Half = float __attribute__((vector_size(32)));
  using Quarter = float __attribute__((vector_size(16)));
  const Half h = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                 __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  const Quarter q = __builtin_shufflevector(h, h, 0, 1, 2, 3) + __builtin_shufflevector(h, h, 4, 5, 6, 7);
  return (q[0] + q[2]) + (q[1] + q[3]);
}

class DotRowsMatMulKernel : public Kernel {
 public:
  DotRowsMatMulKernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec, const DotRowsDims& d)
      : d_(d), epilogue_(graph, group, spec) {
    x_input_ = int(input_slot(group, spec.anchor.x));
    t_input_ = int(input_slot(group, spec.anchor.w));
  }

  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[size_t(x_input_)]);
    const float* t = static_cast<const float*>(args.inputs[size_t(t_input_)]);
    float* y = static_cast<float*>(args.outputs[0]);
    epilogue_.bind(args);
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, d_.n * d_.k));
    parallel_for(d_.batch, grain, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        float* yb = y + b * d_.m * d_.n;
        multiply(x + b * d_.m * d_.k, t + b * d_.n * d_.k, yb);
        for (int64_t r = 0; r < d_.m; ++r) epilogue_.apply_columns(yb + r * d_.n, (b * d_.m + r) * d_.n, 0, d_.n);
      }
    });
  }

  std::string implementation() const override { return "direct matmul (dot rows)"; }

 private:
  // yb [m, n] = xb [m, k] tb [n, k]^T + bias, rows of xb four at a time.
  void multiply(const float* xb, const float* tb, float* yb) const {
    const float* bias = epilogue_.biases();  // zeros without one
    for (int64_t r0 = 0; r0 < d_.m; r0 += 4) {
      const int64_t rows = std::min<int64_t>(4, d_.m - r0);
      for (int64_t j = 0; j < d_.n; ++j) {
        const float* tj = tb + j * d_.k;
        simd::Vec acc[4] = {};
        int64_t i = 0;
        for (; i + simd::kLanes <= d_.k; i += simd::kLanes) {
          const simd::Vec tv = simd::load(tj + i);
          for (int64_t r = 0; r < rows; ++r) acc[r] += simd::load(xb + (r0 + r) * d_.k + i) * tv;
        }
        for (int64_t r = 0; r < rows; ++r) {
          float sum = lane_sum(acc[r]);
          for (int64_t l = i; l < d_.k; ++l) sum += xb[(r0 + r) * d_.k + l] * tj[l];
          yb[(r0 + r) * d_.n + j] = sum + bias[j];
        }
      }
    }
  }

  DotRowsDims d_;
  LinearEpilogue epilogue_;
  int x_input_ = -1, t_input_ = -1;
};

}  // namespace

bool direct_matmul_supported(const Graph& graph, const LinearSpec& spec) {
  const onednn::LinearAnchor& a = spec.anchor;
  if (spec.out_type.dtype != DType::Float32 || graph.type(a.x).dtype != DType::Float32) return false;
  if (!std::all_of(spec.epilogues.begin(), spec.epilogues.end(), epilogue_supported)) return false;
  if (const std::optional<DotRowsDims> d = dot_rows_dims(graph, a)) return d->m <= kDirectMatMulMaxRows && d->k >= 1;
  const std::optional<MatMulDims> d = dims_of(a);
  if (!d || d->m > kDirectMatMulMaxRows || d->k < 1) return false;
  return graph.value(a.w).is_constant() && graph.value(a.w).constant->defined();
}

std::unique_ptr<Kernel> make_direct_matmul_kernel(const Graph& graph, const KernelGroup& group,
                                                  const LinearSpec& spec) {
  if (!direct_matmul_supported(graph, spec)) return nullptr;
  if (const std::optional<DotRowsDims> d = dot_rows_dims(graph, spec.anchor)) {
    return std::make_unique<DotRowsMatMulKernel>(graph, group, spec, *d);
  }
  return std::make_unique<DirectMatMulKernel>(graph, group, spec, *dims_of(spec.anchor));
}

}  // namespace orchid::runtime::cpu
