// ConvTranspose (2-D, one group) split by output phase, each phase an
// implicit GEMM like the dense direct conv's: output (oy, ox) = (ay + sh r,
// ax + sw c) receives the taps ky with (ay + ph - ky dh) divisible by sh,
// from input row r + ty(ky), ty = (ay + ph - ky dh) / sh (and likewise for
// columns), so phase (ay, ax) is a small conv of the input with those taps:
// K = cin x its taps, each (ci, ky, kx) a B row that is the (zero-padded
// where a tap reaches outside) input plane shifted by a constant. No column
// buffer (GEMM + col2im wrote and read cout kh kw floats per input
// position) and no scattered adds.
// Work is split into tasks of phase rows (and output channels where rows
// are few): a task multiplies every phase for its rows into a scratch
// buffer that stays in cache, interleaves the phases into the output rows
// (two column phases as vector shuffles) and runs the epilogue on them.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/kernels/cpu/direct_gemm.h"
#include "runtime/kernels/cpu/direct_internal.h"
#include "runtime/kernels/cpu/linear_epilogue.h"
#include "runtime/kernels/cpu/simd.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu::direct {

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

struct Phase {
  int64_t ay = 0, ax = 0;     // its first output row and column
  int64_t rows = 0, cols = 0;  // its output rows and columns
  PackedWeights weights;      // [cout][cin x taps]
  std::vector<int64_t> tap_offset;  // per (ci, tap): the B row's start in the padded planes
};

class ConvTransposeKernel : public Kernel {
 public:
  ConvTransposeKernel(const Graph& graph, const KernelGroup& group, const onednn::LinearSpec& spec)
      : epilogue_(graph, group, spec) {
    const onednn::LinearAnchor& a = spec.anchor;
    const Shape& w = graph.type(a.w).shape;  // [cin, cout, kh, kw]
    s_.n = a.src[0], s_.cin = a.src[1], s_.ih = a.src[2], s_.iw = a.src[3];
    s_.cout = a.dst[1], s_.oh = a.dst[2], s_.ow = a.dst[3];
    s_.kh = w[2], s_.kw = w[3];
    s_.sh = a.strides[0], s_.sw = a.strides[1];
    s_.dh = a.dilations[0] + 1, s_.dw = a.dilations[1] + 1;
    s_.ph = a.pad_l[0], s_.pw = a.pad_l[1];
    x_input_ = int(input_slot(group, a.x));
    plan(onednn::constant_values(*graph.value(a.w).constant));
  }

  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[size_t(x_input_)]);
    float* y = static_cast<float*>(args.outputs[0]);
    epilogue_.bind(args);
    const int64_t plane = s_.oh * s_.ow;
    if (pads_) padded_.resize(size_t(s_.cin * qh_ * qw_));
    for (int64_t n = 0; n < s_.n; ++n) {
      const float* planes = x + n * s_.cin * s_.ih * s_.iw;
      if (pads_) {
        pad_planes(planes, s_.cin, s_.ih, s_.iw, top_, left_, qh_, qw_, padded_.data());
        planes = padded_.data();
      }
      float* yn = y + n * s_.cout * plane;
      parallel_for(row_tasks_ * channel_tasks_, 1, [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task) {
          const int64_t r0 = task / channel_tasks_ * task_rows_;
          const int64_t c0 = task % channel_tasks_ * task_channels_;
          run_task(planes, r0, std::min(r0 + task_rows_, phases_[0].rows), c0,
                   std::min(c0 + task_channels_, s_.cout), n, yn);
        }
        if (stream_) simd::stream_fence();
      });
    }
  }

  std::string implementation() const override { return "direct deconv (phases)"; }
  std::vector<std::span<const std::byte>> weight_buffers() const override {
    std::vector<std::span<const std::byte>> buffers;
    for (const Phase& phase : phases_) buffers.push_back(phase.weights.bytes());
    return buffers;
  }
  bool reads_input_at_run(size_t input) const override {
    return int(input) == x_input_ || epilogue_.reads_input(input);
  }

 private:
  // The phases, their taps, the padding that keeps every read inside.
  void plan(const std::vector<float>& w) {
    struct Taps {
      std::vector<int64_t> k, shift;  // tap and its input shift
    };
    auto taps = [](int64_t a, int64_t p, int64_t k, int64_t d, int64_t s) {
      Taps t;
      for (int64_t i = 0; i < k; ++i) {
        const int64_t num = a + p - i * d;
        if (num - floor_div(num, s) * s == 0) t.k.push_back(i), t.shift.push_back(floor_div(num, s));
      }
      return t;
    };
    int64_t top = 0, left = 0, bottom = 0, right = 0;  // padding around the input plane
    std::vector<std::pair<Taps, Taps>> phase_taps;
    for (int64_t ay = 0; ay < std::min(s_.sh, s_.oh); ++ay) {
      for (int64_t ax = 0; ax < std::min(s_.sw, s_.ow); ++ax) {
        Phase phase;
        phase.ay = ay, phase.ax = ax;
        phase.rows = (s_.oh - ay + s_.sh - 1) / s_.sh;
        phase.cols = (s_.ow - ax + s_.sw - 1) / s_.sw;
        Taps ty = taps(ay, s_.ph, s_.kh, s_.dh, s_.sh), tx = taps(ax, s_.pw, s_.kw, s_.dw, s_.sw);
        for (int64_t t : ty.shift) top = std::max(top, -t), bottom = std::max(bottom, phase.rows - 1 + t - (s_.ih - 1));
        for (int64_t t : tx.shift) left = std::max(left, -t), right = std::max(right, phase.cols - 1 + t - (s_.iw - 1));
        phases_.push_back(std::move(phase));
        phase_taps.emplace_back(std::move(ty), std::move(tx));
      }
    }
    top_ = top, left_ = left;
    qh_ = s_.ih + top + bottom;
    qw_ = s_.iw + left + right;
    pads_ = qh_ != s_.ih || qw_ != s_.iw;
    for (size_t i = 0; i < phases_.size(); ++i) {
      Phase& phase = phases_[i];
      const auto& [ty, tx] = phase_taps[i];
      const int64_t depth = s_.cin * int64_t(ty.k.size() * tx.k.size());
      std::vector<float> a(size_t(s_.cout * depth));
      for (int64_t co = 0; co < s_.cout; ++co) {
        int64_t k = 0;
        for (int64_t ci = 0; ci < s_.cin; ++ci) {
          for (size_t y = 0; y < ty.k.size(); ++y) {
            for (size_t x = 0; x < tx.k.size(); ++x, ++k) {
              a[size_t(co * depth + k)] = w[size_t(((ci * s_.cout + co) * s_.kh + ty.k[y]) * s_.kw + tx.k[x])];
            }
          }
        }
      }
      for (int64_t ci = 0; ci < s_.cin; ++ci) {
        for (int64_t sy : ty.shift) {
          for (int64_t sx : tx.shift) phase.tap_offset.push_back(ci * qh_ * qw_ + (sy + top) * qw_ + sx + left);
        }
      }
      phase.weights = PackedWeights(a.data(), s_.cout, depth);
    }
    plan_tasks();
    stream_ = epilogue_.only_bias() && s_.n * s_.cout * s_.oh * s_.ow * 4 > kStreamBytes;
  }

  // Tasks of task_rows_ phase rows (about 256 GEMM columns, at most ~256 KB
  // of scratch) by task_channels_ output channels (a multiple of the weights'
  // row block), at least 8 of them where the work allows, to share among threads.
  void plan_tasks() {
    const int64_t rows = phases_[0].rows;  // phase (0, 0) has the most
    const int64_t row_bytes = int64_t(phases_.size()) * s_.cout * qw_ * 4;
    int64_t task_rows = std::clamp<int64_t>((256 + qw_ - 1) / qw_, 1, rows);
    task_rows = std::min(task_rows, std::max<int64_t>(1, (256 << 10) / row_bytes));
    row_tasks_ = (rows + task_rows - 1) / task_rows;
    const int64_t block = phases_[0].weights.block_rows();
    const int64_t blocks = (s_.cout + block - 1) / block;
    const int64_t channel_tasks = std::clamp<int64_t>((8 + row_tasks_ - 1) / row_tasks_, 1, blocks);
    if (channel_tasks * row_tasks_ < 8) row_tasks_ = std::min(rows, (8 + channel_tasks - 1) / channel_tasks);
    task_rows_ = (rows + row_tasks_ - 1) / row_tasks_;
    row_tasks_ = (rows + task_rows_ - 1) / task_rows_;
    task_channels_ = (blocks + channel_tasks - 1) / channel_tasks * block;
    channel_tasks_ = (s_.cout + task_channels_ - 1) / task_channels_;
  }

  // Phase rows [r0, r1) of output channels [c0, c1): every phase's GEMM into
  // scratch, the phases interleaved into the output rows, the epilogue.
  void run_task(const float* planes, int64_t r0, int64_t r1, int64_t c0, int64_t c1, int64_t n, float* yn) const {
    thread_local std::vector<float> scratch;
    thread_local std::vector<const float*> rows;
    const int64_t ld = task_rows_ * qw_;  // one channel's rows of one phase in scratch
    scratch.resize(phases_.size() * size_t(s_.cout * ld));
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& phase = phases_[i];
      if (r0 >= phase.rows) continue;
      const int64_t cols = (std::min(r1, phase.rows) - r0 - 1) * qw_ + phase.cols;
      rows.resize(phase.tap_offset.size());
      for (size_t k = 0; k < rows.size(); ++k) rows[k] = planes + phase.tap_offset[k] + r0 * qw_;
      phase.weights.multiply(rows.data(), cols, scratch.data() + i * s_.cout * ld, ld, c0, c1, epilogue_.biases());
    }
    const int64_t plane = s_.oh * s_.ow;
    const int64_t oy0 = r0 * s_.sh, oy1 = std::min(s_.oh, r1 * s_.sh);
    for (int64_t c = c0; c < c1; ++c) {
      float* yc = yn + c * plane;
      for (int64_t oy = oy0; oy < oy1; ++oy) {
        const int64_t ay = oy % s_.sh, r = oy / s_.sh;
        interleave_row(scratch.data(), ld, c, ay, r - r0, yc + oy * s_.ow);
      }
      epilogue_.apply(yc + oy0 * s_.ow, (n * s_.cout + c) * plane + oy0 * s_.ow, c, (oy1 - oy0) * s_.ow);
    }
  }

  int64_t column_phases() const { return std::min(s_.sw, s_.ow); }

  // Output row r of phase row ay (row `r` of the task's scratch) of channel
  // c: its column phases interleaved.
  void interleave_row(const float* scratch, int64_t ld, int64_t c, int64_t ay, int64_t r, float* out) const {
    const int64_t count = column_phases();
    const float* first = scratch + (size_t(ay * count) * s_.cout + c) * ld + r * qw_;
    simd::interleave_phases(first, s_.cout * ld, s_.ow, count, out, stream_);
  }

  ConvShape s_;
  LinearEpilogue epilogue_;
  int x_input_ = -1;
  std::vector<Phase> phases_;
  int64_t qh_ = 0, qw_ = 0, top_ = 0, left_ = 0;
  bool pads_ = false;  // whether a tap reaches outside the input plane
  // Whether output rows are streamed past the caches (kStreamBytes; no
  // epilogue reads them back).
  bool stream_ = false;
  std::vector<float> padded_;
  int64_t task_rows_ = 1, row_tasks_ = 1, task_channels_ = kRows, channel_tasks_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> make_conv_transpose(const Graph& graph, const KernelGroup& group,
                                            const onednn::LinearSpec& spec) {
  return std::make_unique<ConvTransposeKernel>(graph, group, spec);
}

}  // namespace orchid::runtime::cpu::direct
