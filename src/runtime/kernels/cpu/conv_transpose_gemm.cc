// ConvTranspose as GEMM + col2im. Per chunk of B batch items and group g:
//   cols[Cout_g*K, B*In] = Wt_g [Cout_g*K, Cin_g] x X_g [Cin_g, B*In]   (dnnl_sgemm)
// with K the kernel taps and In the input spatial size (the chunk's images
// side by side; B as large as keeps cols within 512 KB), then per image, output
// channel and block of output rows (in parallel) the rows are set to the
// bias, the taps whose input rows land on them are added along the width
// (col2im), and the epilogues are applied while the rows are in cache.
// A single image whose columns far exceed L2 (FSRCNN's last layer: 81 taps
// x 256 x 256 inputs, 21 MB) goes by bands of input rows instead (run_banded):
// each band's columns are computed next to the few rows before it that its
// output rows still need, and the output rows they complete are written.
//
// oneDNN 2.6 deconvolution (jit:avx512_core) vs this kernel, float32, batch
// 1, with the epilogue, `orchid bench --runs 30` per single-layer model, ms,
// median / min, 1 thread, on 2 cores shared with other builds (medians are
// noisy; the mins are the better guide):
//
//   layer                                     onednn          gemm
//   dc1 100->512, 1x1->4x4, k4 + Relu       0.36 / 0.30    0.20 / 0.16
//   dc2 512->256, 4->8, k4 s2 p1 + Relu     1.64 / 1.30    1.07 / 0.89
//   dc3 256->128, 8->16                     1.83 / 1.69    0.75 / 0.72
//   dc4 128->64, 16->32                    14.9  / 2.81    0.75 / 0.73
//   dc5 64->3, 32->64 + Tanh               10.1  / 2.00    0.22 / 0.22
//   FSRCNN 56->1, 32x32, k9 s3 p4 op2       0.18 / 0.16    0.15 / 0.15
//   FSRCNN 56->1, 32x32, k9 s4 p4 op3       9.4  / 2.05    0.17 / 0.16
//   k2 s2 64->32, 32x32 + Relu             20.3  / 8.33    0.25 / 0.25
//
// At 2 threads the machine was too loaded for stable numbers (OpenMP with
// 2 threads on 2 busy cores); the mins that came through still favour gemm
// (dc1 0.18 vs 0.14, dc5 2.04 vs 0.25, up2 36 vs 12) except dc2-dc4 where
// both were swamped. Whole DCGAN generator at 2 threads, min of 20 runs:
// 2.29 ms with oneDNN, 0.56 ms (median 0.59) with gemm; ORT 0.67-0.74 ms.
// gemm never lost, so the rule (conv_transpose_gemm_preferred) is: always.
#include "runtime/kernels/cpu/conv_transpose_gemm.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/kernels/cpu/linear_epilogue.h"
#include "runtime/kernels/cpu/simd.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu {

namespace {

// GEMM columns below which dnnl_sgemm runs far from its peak.
constexpr int64_t kMinGemmColumns = 256;
// The columns a band of run_banded holds: three quarters of a core's L2 here
// (FSRCNN's deconv at 2 threads: 6.1 ms with 512 KB, 4.0 with 1 MB, 3.7 with
// 1.5 MB; at 1 thread 6.4-6.6 ms with 1 MB to 2 MB).
constexpr int64_t kBandBytes = int64_t(1536) << 10;

using onednn::LinearAnchor;
using onednn::LinearKind;
using onednn::LinearSpec;

class ConvTransposeGemmKernel : public Kernel {
 public:
  ConvTransposeGemmKernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec)
      : epilogue_(graph, group, spec) {
    const LinearAnchor& a = spec.anchor;
    const size_t sd = a.src.size() - 2;  // spatial rank, 1..3
    batch_ = a.src[0];
    groups_ = a.groups;
    cin_g_ = a.src[1] / groups_;
    cout_g_ = a.dst[1] / groups_;
    // Spatial geometry padded to 3-D with leading unit dims.
    for (size_t i = 0; i < 3; ++i) {
      const bool real = i + sd >= 3;
      const size_t j = real ? i + sd - 3 : 0;
      in_[i] = real ? a.src[2 + j] : 1;
      out_[i] = real ? a.dst[2 + j] : 1;
      k_[i] = real ? a.weights[a.weights.size() - sd + j] : 1;
      stride_[i] = real ? a.strides[j] : 1;
      dil_[i] = real ? a.dilations[j] + 1 : 1;
      pad_[i] = real ? a.pad_l[j] : 0;
    }
    taps_ = k_[0] * k_[1] * k_[2];
    in_size_ = in_[0] * in_[1] * in_[2];
    out_size_ = out_[0] * out_[1] * out_[2];
    x_input_ = int(input_slot(group, a.x));
    landing_taps();
    plan_bands();

    // ONNX W [Cin, Cout_g, taps] -> per group Wt [Cout_g*taps, Cin_g].
    const std::vector<float> wv = onednn::constant_values(*graph.value(a.w).constant);
    const int64_t rows = cout_g_ * taps_;
    wt_.resize(size_t(groups_ * rows * cin_g_));
    for (int64_t g = 0; g < groups_; ++g) {
      for (int64_t ci = 0; ci < cin_g_; ++ci) {
        const float* src = wv.data() + (g * cin_g_ + ci) * rows;
        float* dst = wt_.data() + g * rows * cin_g_ + ci;
        for (int64_t r = 0; r < rows; ++r) dst[r * cin_g_] = src[r];
      }
    }
  }

  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[size_t(x_input_)]);
    float* y = static_cast<float*>(args.outputs[0]);
    epilogue_.bind(args);
    const int64_t rows = cout_g_ * taps_;
    // Images side by side in one GEMM per group (their columns gathered):
    // a GAN's first layer made one GEMV per image. As many images as keep
    // the columns within 512 KB, so col2im still reads them from L2 (with
    // 8 MB of columns DCGAN ran 10% slower at 1 thread), but at least as
    // many as make the GEMM kMinGemmColumns wide (DCGAN's batch-16 4x4
    // layer had made 32-column GEMMs).
    const int64_t in_cache = (int64_t(128) << 10) / std::max<int64_t>(1, groups_ * rows * in_size_);
    const int64_t wide_enough = (kMinGemmColumns + in_size_ - 1) / in_size_;
    const int64_t images = std::clamp<int64_t>(std::max(in_cache, wide_enough), 1, batch_);
    if (images == 1 && band_rows_ > 0) {
      for (int64_t n = 0; n < batch_; ++n) run_banded(x, n, y);
      return;
    }
    for (int64_t n0 = 0; n0 < batch_; n0 += images) {
      const int64_t nb = std::min(images, batch_ - n0), ld = nb * in_size_;
      cols_.resize(size_t(groups_ * rows * ld));
      for (int64_t g = 0; g < groups_; ++g) multiply(x, n0, nb, g);
      col2im(cols_.data(), ld, nb, n0, 0, out_[0] * out_[1], 0, y);
    }
  }

  std::string implementation() const override { return "gemm deconv (col2im)"; }
  std::vector<std::span<const std::byte>> weight_buffers() const override {
    return {std::as_bytes(std::span(wt_))};
  }

  bool reads_input_at_run(size_t input) const override {
    return int(input) == x_input_ || epilogue_.reads_input(input);
  }

 private:
  // cols[:, j in_size + i] = Wt_g x[n0 + j, g] for images j < nb (one image
  // at a single input position: dot products).
  void multiply(const float* x, int64_t n0, int64_t nb, int64_t g) {
    const int64_t rows = cout_g_ * taps_, ld = nb * in_size_;
    const float* wt = wt_.data() + g * rows * cin_g_;
    float* cols = cols_.data() + g * rows * ld;
    auto image = [&](int64_t j) { return x + ((n0 + j) * groups_ + g) * cin_g_ * in_size_; };
    if (ld == 1) {
      column(wt, image(0), cols, rows);
      return;
    }
    const float* b = image(0);
    if (nb > 1) {  // gather the images' [cin_g][in] blocks into [cin_g][nb in]
      gathered_.resize(size_t(cin_g_ * ld));
      for (int64_t ci = 0; ci < cin_g_; ++ci) {
        for (int64_t j = 0; j < nb; ++j) {
          std::memcpy(gathered_.data() + ci * ld + j * in_size_, image(j) + ci * in_size_, size_t(in_size_) * 4);
        }
      }
      b = gathered_.data();
    }
    columns(g, b, ld, ld, cols, ld);
  }

  // cols [rows, n] (rows ldc apart) = Wt_g x_g, x_g's rows ldb apart.
  void columns(int64_t g, const float* x, int64_t ldb, int64_t n, float* cols, int64_t ldc) const {
    const int64_t rows = cout_g_ * taps_;
    const dnnl_status_t status =
        dnnl_sgemm('N', 'N', rows, n, cin_g_, 1.f, wt_.data() + g * rows * cin_g_, cin_g_, x, ldb, 0.f, cols, ldc);
    ORCHID_CHECK(status == dnnl_success) << "dnnl_sgemm failed: " << int(status);
  }

  // Image n by bands of band_rows_ input rows (2-D, so input rows are the
  // height's): cols_ holds input rows [keep, have) of every tap row, at most
  // the rows one output row reads plus a band, so it stays in L2 between
  // the GEMM that writes a band and the col2im that reads it (the whole 21
  // MB of FSRCNN's columns went to memory and back: 12 ms for a 3 ms GEMM).
  // After each band, the output rows whose every input row is in are written,
  // and the rows the next output row reads are moved to the front.
  void run_banded(const float* x, int64_t n, float* y) {
    const int64_t rows = cout_g_ * taps_, width = in_[2], height = in_[1], out_rows = out_[1];
    const int64_t ld = (band_rows_ + halo_rows_) * width;
    cols_.resize(size_t(groups_ * rows * ld));
    int64_t keep = 0, have = 0, done = 0;
    while (done < out_rows) {
      const int64_t first = std::min(first_input_row_[size_t(done)], have);
      if (first > keep) {
        for (int64_t row = 0; row < groups_ * rows; ++row) {
          float* line = cols_.data() + row * ld;
          std::memmove(line, line + (first - keep) * width, size_t((have - first) * width) * 4);
        }
        keep = first;
      }
      const int64_t next = std::min(height, have + band_rows_);
      for (int64_t g = 0; g < groups_; ++g) {
        const float* xg = x + (n * groups_ + g) * cin_g_ * in_size_ + have * width;
        columns(g, xg, in_size_, (next - have) * width, cols_.data() + g * rows * ld + (have - keep) * width, ld);
      }
      have = next;
      int64_t end = done;
      while (end < out_rows && (have == height || last_input_row_[size_t(end)] < have)) ++end;
      col2im(cols_.data(), ld, 1, n, done, end, keep, y);
      done = end;
    }
  }

  // The chunk's images' outputs from their columns (cols, rows ld apart,
  // image j at column j in_size), in parallel over (channel, block of output
  // rows): about as many tasks as one row per channel. Each task walks the
  // images in turn, so it reads its channel's columns in order (image by
  // image, DCGAN's col2im missed the cache at every tap row: 3.3 ms of 16).
  // Output rows [r_begin, r_end) only, from columns that start at input
  // row `row0` (of a 2-D input; 0 for whole images).
  void col2im(const float* cols, int64_t ld, int64_t nb, int64_t n0, int64_t r_begin, int64_t r_end, int64_t row0,
              float* y) const {
    const int64_t cout = cout_g_ * groups_;
    const int64_t out_rows = r_end - r_begin;
    const int64_t block = std::max<int64_t>(1, out_rows * cout / 256);
    const int64_t blocks = (out_rows + block - 1) / block;
    const int64_t work = std::max<int64_t>(1, nb * block * out_[2] * std::max<int64_t>(1, taps_ / stride_[1] / stride_[0]));
    parallel_for(cout * blocks, std::max<int64_t>(1, 32768 / work), [&](int64_t begin, int64_t end) {
      std::vector<float> phases(width_phases_.size() * size_t(phase_width()));
      for (int64_t t = begin; t < end; ++t) {
        const int64_t c = t / blocks, r0 = r_begin + t % blocks * block, r1 = std::min(r_end, r0 + block);
        for (int64_t j = 0; j < nb; ++j) {
          const int64_t n = n0 + j;
          float* out = y + (n * cout + c) * out_size_;
          const float* taps = cols + j * in_size_ + c * taps_ * ld;  // groups are contiguous in cols
          for (int64_t r = r0; r < r1; ++r) add_taps(taps, ld, row0, c, r, phases.data(), out + r * out_[2]);
          epilogue_.apply(out + r0 * out_[2], (n * cout + c) * out_size_ + r0 * out_[2], c, (r1 - r0) * out_[2]);
        }
      }
    });
  }

  // Output row r (one (depth, height) pair) of channel c, whose taps'
  // columns start at `taps`: the bias, then the taps whose input row lands
  // on it (o = i s + k d - p, i integral), each added along the width. Rows
  // are independent, so a model with one output channel (FSRCNN's last
  // layer) still runs on every thread. The taps per output position are
  // tables made once (landing_taps): with the divisions per row, DCGAN's
  // 4x4 stride-2 col2im took 5 ms of a 20 ms layer whose GEMM takes 12.
  // With a width stride s >= 2 and phases at least a vector long, the adds
  // along the width are gathered, not scattered: each column phase p
  // (outputs p, p + s, ...) is summed contiguously into its row of `phases`
  // (phase_width() apart), then the phases are interleaved into dst.
  // Scattered adds d[3 j] += src[j] had kept FSRCNN's col2im scalar.
  void add_taps(const float* taps, int64_t ld, int64_t row0, int64_t c, int64_t r, float* phases, float* dst) const {
    if (width_phases_.empty()) {
      add_taps_scattered(taps, ld, row0, c, r, dst);
      return;
    }
    const int64_t width = phase_width(), count = int64_t(width_phases_.size());
    for (int64_t p = 0; p < count; ++p) {
      float* acc = phases + p * width;
      std::fill(acc, acc + width, epilogue_.bias(c));
      for_landing_rows(taps, ld, row0, r, [&](const float* src) {
        for (const PhaseTap& t : width_phases_[size_t(p)]) {
          add_contiguous(src + t.k * ld + t.first + t.shift, acc + t.first, t.last - t.first);
        }
      });
    }
    simd::interleave_phases(phases, width, out_[2], count, dst);
  }

  // add_taps for rows whose phases are shorter than a vector (InfoGAN's 14
  // columns: the gathered form took 4.2 ms where this takes 3.7): each tap
  // added along the width into every s-th output.
  void add_taps_scattered(const float* taps, int64_t ld, int64_t row0, int64_t c, int64_t r, float* dst) const {
    std::fill(dst, dst + out_[2], epilogue_.bias(c));
    for_landing_rows(taps, ld, row0, r, [&](const float* src) {
      for (const WidthSpan& span : width_spans_) {
        add_strided(src + span.k * ld + span.first_input, dst + span.first_output, span.count);
      }
    });
  }

  // add(src) for each (depth, height) tap whose input row lands on output
  // row r, src its input row's columns for kernel column 0 (the others ld
  // apart); the columns start at input row row0.
  template <typename Add>
  void for_landing_rows(const float* taps, int64_t ld, int64_t row0, int64_t r, Add&& add) const {
    const int64_t od = r / out_[1], oh = r % out_[1];
    for (const Tap& d : landing_[0][size_t(od)]) {
      for (const Tap& h : landing_[1][size_t(oh)]) {
        add(taps + (d.k * k_[1] + h.k) * k_[2] * ld + (d.i * in_[1] + h.i - row0) * in_[2]);
      }
    }
  }

  // The longest column phase's length.
  int64_t phase_width() const {
    const int64_t s = std::max<int64_t>(1, int64_t(width_phases_.size()));
    return (out_[2] + s - 1) / s;
  }

  // A kernel tap k and the input index i that lands on an output position.
  struct Tap {
    int64_t k, i;
  };
  // Along the width, tap k adds inputs [first_input, first_input + count)
  // to outputs first_output, first_output + s, ...
  struct WidthSpan {
    int64_t k, first_input, first_output, count;
  };
  // In column phase p of the width stride s (outputs o = q s + p), tap k adds
  // its input row's element q + shift to output q, for q in [first, last).
  struct PhaseTap {
    int64_t k, shift, first, last;
  };

  // Per axis and output position, the taps that land on it; the width's
  // spans per tap and, where the column phases are at least a vector long,
  // its taps per phase.
  void landing_taps() {
    for (size_t a = 0; a < 2; ++a) {
      landing_[a].assign(size_t(out_[a]), {});
      for (int64_t o = 0; o < out_[a]; ++o) {
        for (int64_t k = 0; k < k_[a]; ++k) {
          if (const int64_t i = input_index(o, k, a); i >= 0) landing_[a][size_t(o)].push_back({k, i});
        }
      }
    }
    const int64_t s = stride_[2];
    for (int64_t kw = 0; kw < k_[2]; ++kw) {
      const int64_t off = kw * dil_[2] - pad_[2];  // o = iw s + off
      const int64_t w0 = off >= 0 ? 0 : (-off + s - 1) / s;
      const int64_t w1 = out_[2] - off <= 0 ? 0 : std::min(in_[2], (out_[2] - off + s - 1) / s);
      if (w0 < w1) width_spans_.push_back({kw, w0, w0 * s + off, w1 - w0});
    }
    if (s < 2 || out_[2] / s < simd::kLanes) return;
    width_phases_.resize(size_t(s));
    for (int64_t p = 0; p < int64_t(width_phases_.size()); ++p) {
      const int64_t count = (out_[2] - p + s - 1) / s;
      for (int64_t kw = 0; kw < k_[2]; ++kw) {
        const int64_t t = p + pad_[2] - kw * dil_[2];  // q s + t = i s for input i
        if (((t % s) + s) % s != 0) continue;
        const int64_t shift = t >= 0 ? t / s : -((-t) / s);
        const int64_t first = std::max<int64_t>(0, -shift), last = std::min(count, in_[2] - shift);
        if (first < last) width_phases_[size_t(p)].push_back({kw, shift, first, last});
      }
    }
  }

  // Bands for run_banded, where one image's columns are several times the
  // budget and the input is 2-D (at least a few rows per band): per output
  // row the first and last input rows that land on it, and the most rows
  // one output row reads (kept between bands).
  void plan_bands() {
    const int64_t row_bytes = groups_ * cout_g_ * taps_ * in_[2] * 4;  // one input row's columns
    if (in_[0] != 1 || row_bytes * in_[1] <= 4 * kBandBytes) return;
    first_input_row_.assign(size_t(out_[1]), 0);
    last_input_row_.assign(size_t(out_[1]), -1);
    halo_rows_ = 1;
    for (int64_t o = 0; o < out_[1]; ++o) {
      const std::vector<Tap>& taps = landing_[1][size_t(o)];
      if (taps.empty()) {  // no input row lands here: the row is the bias
        first_input_row_[size_t(o)] = o > 0 ? first_input_row_[size_t(o - 1)] : 0;
        last_input_row_[size_t(o)] = o > 0 ? last_input_row_[size_t(o - 1)] : -1;
        continue;
      }
      int64_t lo = in_[1], hi = -1;
      for (const Tap& t : taps) lo = std::min(lo, t.i), hi = std::max(hi, t.i);
      first_input_row_[size_t(o)] = lo;
      last_input_row_[size_t(o)] = hi;
      halo_rows_ = std::max(halo_rows_, hi - lo + 1);
    }
    band_rows_ = std::max<int64_t>(kBandBytes / row_bytes - halo_rows_, 2);
  }

  // The input index i along axis a with i s + k d - p == o, or -1.
  int64_t input_index(int64_t o, int64_t k, size_t a) const {
    const int64_t t = o + pad_[a] - k * dil_[a];
    if (t < 0 || t % stride_[a] != 0 || t / stride_[a] >= in_[a]) return -1;
    return t / stride_[a];
  }

  // d[j] += src[j] for j < count.
  static void add_contiguous(const float* __restrict src, float* __restrict d, int64_t count) {
    for (int64_t j = 0; j < count; ++j) d[j] += src[j];
  }

  // d[j s] += src[j] for j < count.
  void add_strided(const float* src, float* d, int64_t count) const {
    const int64_t s = stride_[2];
    if (s == 1) {
      add_contiguous(src, d, count);
    } else if (s == 2) {
      for (int64_t j = 0; j < count; ++j) d[2 * j] += src[j];
    } else {
      for (int64_t j = 0; j < count; ++j) d[j * s] += src[j];
    }
  }

  // cols = Wt x for a single input position (a GAN's first layer, 1x1 ->
  // 4x4): dot products, parallel over rows. dnnl_sgemm took 1.6 ms for
  // 8192 x 100 where the weights' bytes need 0.08.
  void column(const float* wt, const float* x, float* cols, int64_t rows) const {
    parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, cin_g_)), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        cols[r] = simd::dot(wt + r * cin_g_, x, cin_g_);
      }
    });
  }

  int64_t batch_ = 1, groups_ = 1, cin_g_ = 0, cout_g_ = 0, taps_ = 1, in_size_ = 1, out_size_ = 1;
  int64_t in_[3] = {}, out_[3] = {}, k_[3] = {}, stride_[3] = {}, dil_[3] = {}, pad_[3] = {};
  int x_input_ = -1;
  std::vector<float> wt_, cols_, gathered_;
  std::vector<std::vector<Tap>> landing_[2];  // depth, height
  std::vector<WidthSpan> width_spans_;
  std::vector<std::vector<PhaseTap>> width_phases_;  // per column phase, or none: scattered adds
  // Banded images (plan_bands): rows per band (0: whole images), the most
  // input rows one output row reads, and per output row its first and last.
  int64_t band_rows_ = 0, halo_rows_ = 0;
  std::vector<int64_t> first_input_row_, last_input_row_;
  LinearEpilogue epilogue_;
};

}  // namespace

bool conv_transpose_gemm_applies(const Graph& graph, const LinearSpec& spec) {
  const LinearAnchor& a = spec.anchor;
  if (a.kind != LinearKind::ConvTranspose || a.src.size() < 3 || a.src.size() > 5) return false;
  if (!graph.value(a.w).is_constant() || graph.type(a.x).dtype != DType::Float32) return false;
  return std::all_of(spec.epilogues.begin(), spec.epilogues.end(), epilogue_supported);
}

std::unique_ptr<Kernel> make_conv_transpose_gemm_kernel(const Graph& graph, const KernelGroup& group,
                                                        const LinearSpec& spec) {
  if (!conv_transpose_gemm_applies(graph, spec)) return nullptr;
  return std::make_unique<ConvTransposeGemmKernel>(graph, group, spec);
}

bool conv_transpose_gemm_preferred(const LinearSpec& /*spec*/) { return true; }

}  // namespace orchid::runtime::cpu
