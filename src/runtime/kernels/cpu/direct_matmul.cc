// The direct kernel of few-row matrix products (direct_matmul.h).
//
// B [K, N] is packed as panels of kPanel columns, panel p holding
// B[k][p kPanel + j] at [p][k][j] (the last panel padded with zeros). A tile
// is up to kRowTile rows of Y by one panel: kRowTile x 4 vectors of
// accumulators; each step of the sum loads the panel's 4 vectors of row k
// once and broadcasts each row's X[r][k]. One row alone runs two sums (even
// and odd k) so that the additions of one accumulator do not wait on each
// other. The epilogue (bias, then post-ops) runs on each row's panel.
#include "runtime/kernels/cpu/direct_matmul.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "runtime/kernels/cpu/linear_epilogue.h"
#include "runtime/shared_constants.h"
#include "runtime/kernels/cpu/simd.h"
#include "support/error.h"
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

// Y [m, n] = X [m, k] B [k, n] as the canonical product (onednn_linear_spec.cc)
// sees it, when X's and B's leading dimensions are all 1.
std::optional<MatMulDims> dims_of(const onednn::LinearAnchor& a) {
  const size_t rank = a.src.size();
  if (a.kind != onednn::LinearKind::MatMul || rank < 2 || a.weights.size() != rank || a.channels < 1) {
    return std::nullopt;
  }
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (a.src[i] != 1 || a.weights[i] != 1) return std::nullopt;
  }
  return MatMulDims{a.src[rank - 2], a.src[rank - 1], a.weights[rank - 1]};
}

struct FreeFloats {
  void operator()(float* p) const { std::free(p); }
};

// B [k, n] as panels: [panels][k][kPanel], zeros past column n.
struct PackedPanels {
  std::unique_ptr<float, FreeFloats> data;

  PackedPanels(const std::vector<float>& b, const MatMulDims& d) {
    const int64_t panels = (d.n + kPanel - 1) / kPanel;
    const size_t floats = size_t(panels * d.k * kPanel);
    data.reset(static_cast<float*>(std::aligned_alloc(64, floats * sizeof(float))));
    ORCHID_CHECK(data) << "out of memory packing a " << d.k << " x " << d.n << " matrix";
    std::fill(data.get(), data.get() + floats, 0.f);
    for (int64_t p = 0; p < panels; ++p) {
      const int64_t col = p * kPanel, cols = std::min(kPanel, d.n - col);
      for (int64_t k = 0; k < d.k; ++k) {
        std::memcpy(data.get() + (p * d.k + k) * kPanel, b.data() + k * d.n + col, size_t(cols) * sizeof(float));
      }
    }
  }
};

class DirectMatMulKernel : public Kernel {
 public:
  DirectMatMulKernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec, const MatMulDims& d)
      : d_(d), panels_((d.n + kPanel - 1) / kPanel), epilogue_(graph, group, spec) {
    x_input_ = int(input_slot(group, spec.anchor.x));
    const ValueId w = spec.anchor.w;
    packed_ = shared_derived<PackedPanels>(w, "direct matmul panels " + std::to_string(d.k) + "x" + std::to_string(d.n),
                                           [&] {
                                             return std::make_shared<const PackedPanels>(
                                                 onednn::constant_values(*graph.value(w).constant), d);
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
  bool reads_input_at_run(size_t input) const override {
    return int(input) == x_input_ || epilogue_.reads_input(input);
  }

 private:
  // Rows [r0, r0 + R) of Y at panel p's columns.
  template <int R>
  void tile(const float* x, int64_t p, int64_t r0, float* y) const {
    const float* w = packed_->data.get() + p * d_.k * kPanel;
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
  std::shared_ptr<const PackedPanels> packed_;  // shared by the kernels that read the same B
};

}  // namespace

bool direct_matmul_supported(const Graph& graph, const LinearSpec& spec) {
  const onednn::LinearAnchor& a = spec.anchor;
  const std::optional<MatMulDims> d = dims_of(a);
  if (!d || d->m > kDirectMatMulMaxRows || d->k < 1) return false;
  if (!graph.value(a.w).is_constant() || !graph.value(a.w).constant->defined()) return false;
  if (spec.out_type.dtype != DType::Float32 || graph.type(a.x).dtype != DType::Float32) return false;
  return std::all_of(spec.epilogues.begin(), spec.epilogues.end(), epilogue_supported);
}

std::unique_ptr<Kernel> make_direct_matmul_kernel(const Graph& graph, const KernelGroup& group,
                                                  const LinearSpec& spec) {
  if (!direct_matmul_supported(graph, spec)) return nullptr;
  return std::make_unique<DirectMatMulKernel>(graph, group, spec, *dims_of(spec.anchor));
}

}  // namespace orchid::runtime::cpu
