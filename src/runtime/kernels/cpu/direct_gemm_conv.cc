// The direct convolutions on the register-blocked GEMM (direct_gemm.h):
// pointwise (1x1) as Y [cout, P] = W [cout, cin] X [cin, P] per batch item,
// and dense or grouped ones of any kernel (stride 1, one GEMM per group) as
// an implicit GEMM:
// over the zero-padded input plane, flattened with row width QW, output
// index j = oy QW + ox of tap (ky, kx) reads input channel ci at j + ky dh
// QW + kx dw, so each (ci, ky, kx) is one B row of the GEMM, a shifted view
// of the padded plane (K = cin kh kw). The columns from ow to QW of each row
// are computed and dropped when the rows are copied out.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/kernels/cpu/direct_gemm.h"
#include "runtime/kernels/cpu/direct_internal.h"
#include "runtime/kernels/cpu/linear_epilogue.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu::direct {

namespace {

using onednn::LinearSpec;

// Pointwise: a task is a range of columns for every output channel. Deep
// sums take one kCols-column panel per task, first copied to a contiguous
// [cin][kCols] buffer (its rows lie P floats apart, one page each for large
// planes: reading them in place ran 1024 -> 256 at 128x128 at half the GEMM
// peak), which stays in L2 while every row block reads it. Shallow ones
// take several panels per task (their X rows fit in cache as they are), so
// that each output row is written in runs of a few KB rather than 256 B
// scattered over as many pages as there are channels (16 -> 64 at 256x256:
// 1.9 -> 1.5 ms). The epilogue runs on each row of the task's columns.
constexpr int64_t kPackDepth = 64;              // pack panels of at least this many input channels
constexpr int64_t kTaskInputBytes = 64 * 1024;  // X per task, unpacked
constexpr int64_t kMaxTaskPanels = 16;

class PointwiseConvKernel : public Kernel {
 public:
  PointwiseConvKernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec, const ConvShape& s)
      : s_(s), epilogue_(graph, group, spec) {
    x_input_ = int(input_slot(group, spec.anchor.x));
    weights_ = PackedWeights(onednn::constant_values(*graph.value(spec.anchor.w).constant).data(), s_.cout, s_.cin);
    if (s_.cin < kPackDepth) task_panels_ = std::clamp<int64_t>(kTaskInputBytes / (s_.cin * kCols * 4), 1, kMaxTaskPanels);
  }

  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[size_t(x_input_)]);
    float* y = static_cast<float*>(args.outputs[0]);
    epilogue_.bind(args);
    const int64_t p = s_.ih * s_.iw;
    const int64_t width = task_panels_ * kCols;
    const int64_t tasks = (p + width - 1) / width;
    const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, width * s_.cout * s_.cin));
    parallel_for(s_.n * tasks, grain, [&](int64_t begin, int64_t end) {
      thread_local std::vector<float> panel;
      thread_local std::vector<const float*> rows;
      for (int64_t task = begin; task < end; ++task) {
        const int64_t n = task / tasks, col = task % tasks * width, cols = std::min(width, p - col);
        const float* xn = x + n * s_.cin * p;
        rows.resize(size_t(s_.cin));
        if (cols == kCols && s_.cin >= kPackDepth) {
          panel.resize(size_t(s_.cin * kCols));
          for (int64_t k = 0; k < s_.cin; ++k) {
            std::memcpy(panel.data() + k * kCols, xn + k * p + col, kCols * 4);
            rows[size_t(k)] = panel.data() + k * kCols;
          }
        } else {
          for (int64_t k = 0; k < s_.cin; ++k) rows[size_t(k)] = xn + k * p + col;
        }
        float* yn = y + n * s_.cout * p;
        weights_.multiply(rows.data(), cols, yn + col, p, 0, s_.cout, epilogue_.biases());
        for (int64_t m = 0; m < s_.cout; ++m) {
          epilogue_.apply(yn + m * p + col, (n * s_.cout + m) * p + col, m, cols);
        }
      }
    });
  }

  std::string implementation() const override { return "direct pointwise conv"; }
  std::vector<std::span<const std::byte>> weight_buffers() const override {
    return {weights_.bytes()};
  }
  bool reads_input_at_run(size_t input) const override {
    return int(input) == x_input_ || epilogue_.reads_input(input);
  }

 private:
  ConvShape s_;
  LinearEpilogue epilogue_;
  int x_input_ = -1;
  PackedWeights weights_;
  int64_t task_panels_ = 1;  // kCols-column panels per task
};

// Dense (or grouped: one GEMM per group), stride 1: the implicit GEMM over
// the padded plane (see the top).
// Wide outputs go by bands of output rows: a task pads the input rows its
// band reads (all channels, a few hundred KB that stay in cache) and runs
// each output row as one GEMM of ow columns written in place (its B rows
// start at its row of the band). Narrow ones pad whole planes (in parallel
// over channels), then run the GEMM over column panels of the flattened
// output, whose rows are then copied out (a row of 28 would waste most of a
// 64-column tile).
class DenseConvKernel : public Kernel {
 public:
  DenseConvKernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec, const ConvShape& s)
      : s_(s), epilogue_(graph, group, spec) {
    x_input_ = int(input_slot(group, spec.anchor.x));
    // Per group: its output channels' weights [cout_g][cin_g kh kw] (ONNX's rows).
    const std::vector<float> w = onednn::constant_values(*graph.value(spec.anchor.w).constant);
    depth_ = s_.cin / s_.groups * s_.kh * s_.kw;
    const int64_t cout_g = s_.cout / s_.groups;
    for (int64_t g = 0; g < s_.groups; ++g) weights_.emplace_back(w.data() + g * cout_g * depth_, cout_g, depth_);
    qw_ = s_.ow + (s_.kw - 1) * s_.dw;
    qh_ = s_.oh + (s_.kh - 1) * s_.dh;
    flat_ = (s_.oh - 1) * qw_ + s_.ow;
    for (int64_t ky = 0; ky < s_.kh; ++ky) {
      for (int64_t kx = 0; kx < s_.kw; ++kx) tap_offset_.push_back(ky * s_.dh * qw_ + kx * s_.dw);
    }
  }

  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[size_t(x_input_)]);
    float* y = static_cast<float*>(args.outputs[0]);
    epilogue_.bind(args);
    const int64_t plane = s_.oh * s_.ow;
    const bool wide = s_.ow >= kWideRow && s_.ow % 16 == 0;
    if (!wide) padded_.resize(size_t(s_.cin * qh_ * qw_));
    for (int64_t n = 0; n < s_.n; ++n) {
      const float* xn = x + n * s_.cin * s_.ih * s_.iw;
      if (wide) {
        by_bands(xn, y + n * s_.cout * plane, n * s_.cout * plane);
        continue;
      }
      pad_planes(xn, s_.cin, s_.ih, s_.iw, s_.ph, s_.pw, qh_, qw_, padded_.data());
      flat_out_.resize(size_t(s_.cout * flat_));
      const int64_t panels = (flat_ + kCols - 1) / kCols;
      const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, kCols * s_.cout * depth_));
      parallel_for(panels, grain, [&](int64_t begin, int64_t end) {
        for (int64_t panel = begin; panel < end; ++panel) {
          const int64_t j = panel * kCols;
          multiply(j, std::min(kCols, flat_ - j), flat_out_.data() + j, flat_);
        }
      });
      float* yn = y + n * s_.cout * plane;
      parallel_for(s_.cout, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, plane)), [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          float* out = yn + c * plane;
          for (int64_t oy = 0; oy < s_.oh; ++oy) {
            std::memcpy(out + oy * s_.ow, flat_out_.data() + c * flat_ + oy * qw_, size_t(s_.ow) * 4);
          }
          epilogue_.apply(out, (n * s_.cout + c) * plane, c, plane);
        }
      });
    }
  }

  std::string implementation() const override { return "direct conv (implicit GEMM)"; }
  std::vector<std::span<const std::byte>> weight_buffers() const override {
    std::vector<std::span<const std::byte>> buffers;
    for (const PackedWeights& w : weights_) buffers.push_back(w.bytes());
    return buffers;
  }
  bool reads_input_at_run(size_t input) const override {
    return int(input) == x_input_ || epilogue_.reads_input(input);
  }

 private:
  // Rows of whole vectors, at least a tile wide (a scalar tail over the
  // whole sum at each row's end cost 13x at 56 columns).
  static constexpr int64_t kWideRow = 64;

  // Every group's GEMM for `cols` columns into c (rows ldc apart), its B
  // rows the padded planes `planes` (QH' rows each, QH' = qh_ for whole
  // planes) from `shift` on.
  void multiply(const float* planes, int64_t plane_rows, int64_t shift, int64_t cols, float* c, int64_t ldc) const {
    thread_local std::vector<const float*> rows;
    rows.resize(size_t(depth_));
    const int64_t cout_g = s_.cout / s_.groups;
    const int64_t per_channel = s_.kh * s_.kw;
    for (int64_t g = 0; g < s_.groups; ++g) {
      for (int64_t k = 0; k < depth_; ++k) {
        const int64_t tap = g * depth_ + k;
        rows[size_t(k)] = planes + tap / per_channel * plane_rows * qw_ + tap_offset_[size_t(tap % per_channel)] + shift;
      }
      weights_[size_t(g)].multiply(rows.data(), cols, c + g * cout_g * ldc, ldc, 0, cout_g,
                                   epilogue_.biases() + g * cout_g);
    }
  }
  void multiply(int64_t shift, int64_t cols, float* c, int64_t ldc) const {
    multiply(padded_.data(), qh_, shift, cols, c, ldc);
  }

  // Bands of output rows: each pads the input rows it reads into a buffer of
  // about 512 KB, then runs each of its output rows as a GEMM into place,
  // then the epilogue.
  void by_bands(const float* x, float* yn, int64_t offset) const {
    const int64_t plane = s_.oh * s_.ow;
    const int64_t reach = (s_.kh - 1) * s_.dh;  // the extra input rows a band reads
    const int64_t fit = (512 << 10) / (s_.cin * qw_ * 4) - reach;
    const int64_t band = std::clamp<int64_t>(fit, 1, std::max<int64_t>(1, (s_.oh + 7) / 8));
    parallel_for((s_.oh + band - 1) / band, 1, [&](int64_t begin, int64_t end) {
      thread_local std::vector<float> padded;
      for (int64_t task = begin; task < end; ++task) {
        const int64_t oy0 = task * band, oy1 = std::min(s_.oh, oy0 + band);
        const int64_t rows = oy1 - oy0 + reach;
        padded.resize(size_t(s_.cin * rows * qw_));
        pad_rows(x, s_.cin, s_.ih, s_.iw, s_.ph, s_.pw, qw_, oy0, rows, padded.data());
        for (int64_t oy = oy0; oy < oy1; ++oy) {
          multiply(padded.data(), rows, (oy - oy0) * qw_, s_.ow, yn + oy * s_.ow, plane);
          for (int64_t c = 0; c < s_.cout; ++c) {
            epilogue_.apply(yn + c * plane + oy * s_.ow, offset + c * plane + oy * s_.ow, c, s_.ow);
          }
        }
      }
    });
  }

  ConvShape s_;
  LinearEpilogue epilogue_;
  int x_input_ = -1;
  std::vector<PackedWeights> weights_;  // per group
  int64_t depth_ = 0;                   // a group's sum: cin_g kh kw terms
  int64_t qh_ = 0, qw_ = 0, flat_ = 0;  // the padded plane; the flat output's length
  std::vector<int64_t> tap_offset_;     // per (ky, kx): where its B row starts in a padded plane
  std::vector<float> padded_, flat_out_;
};

}  // namespace

std::unique_ptr<Kernel> make_pointwise(const Graph& graph, const KernelGroup& group, const LinearSpec& spec,
                                       const ConvShape& s) {
  return std::make_unique<PointwiseConvKernel>(graph, group, spec, s);
}

std::unique_ptr<Kernel> make_dense(const Graph& graph, const KernelGroup& group, const LinearSpec& spec,
                                   const ConvShape& s) {
  return std::make_unique<DenseConvKernel>(graph, group, spec, s);
}

}  // namespace orchid::runtime::cpu::direct
