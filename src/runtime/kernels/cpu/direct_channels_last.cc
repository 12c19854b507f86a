#include "runtime/kernels/cpu/direct_channels_last.h"

#include <algorithm>
#include <cstdint>

#include "runtime/kernels/cpu/direct_conv.h"
#include "runtime/kernels/cpu/onednn_common.h"
#include "support/error.h"

namespace orchid::runtime::cpu {

namespace direct {

using dnnl::memory;

std::optional<ChannelBlockedLayout> channel_blocked(const memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.ndims != 4 || d.data_type != dnnl_f32 || d.format_kind != dnnl_blocked) return std::nullopt;
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  if (b.strides[2] != b.strides[3] * d.dims[3]) return std::nullopt;  // planes not dense
  ChannelBlockedLayout layout{b.strides[0], b.strides[1], b.strides[3], 1, 1, d.offset0};
  if (b.inner_nblks == 1 && b.inner_idxs[0] == 1) {
    layout.block = b.inner_blks[0];  // blocked: consecutive channels within a block
  } else if (b.inner_nblks == 0) {
    layout.block = d.dims[1], layout.channel = b.strides[1];  // plain: one block, channels sc apart
  } else {
    return std::nullopt;
  }
  return layout;
}

float* aligned_floats(std::vector<float>& storage, int64_t n) {
  constexpr uintptr_t kFloatsPerLine = 16;
  storage.assign(size_t(n) + kFloatsPerLine, 0.f);
  const uintptr_t misaligned = reinterpret_cast<uintptr_t>(storage.data()) / sizeof(float) % kFloatsPerLine;
  return storage.data() + (kFloatsPerLine - misaligned) % kFloatsPerLine;
}

void tap_pixels(const ConvShape& s, const float* image, int64_t pixel, const float* zeros, int64_t q0, int64_t rows,
                int64_t tile, const float** pixels) {
  ORCHID_CHECK(tile <= kMaxTapTile) << "a tile of " << tile << " pixels";
  int64_t oy[kMaxTapTile], ox[kMaxTapTile];
  for (int64_t r = 0, y = q0 / s.ow, x = q0 % s.ow; r < tile; ++r) {
    oy[r] = y * s.sh - s.ph, ox[r] = x * s.sw - s.pw;
    if (r + 1 < rows && ++x == s.ow) x = 0, ++y;
  }
  for (int64_t ky = 0, t = 0; ky < s.kh; ++ky) {
    for (int64_t kx = 0; kx < s.kw; ++kx, ++t) {
      const float** p = pixels + t * tile;
      for (int64_t r = 0; r < tile; ++r) {
        const int64_t iy = oy[r] + ky * s.dh, ix = ox[r] + kx * s.dw;
        const bool inside = iy >= 0 && iy < s.ih && ix >= 0 && ix < s.iw;
        p[r] = inside ? image + (iy * s.iw + ix) * pixel : zeros;
      }
    }
  }
}

bool only_relu(const onednn::LinearSpec& spec) {
  int relus = 0, others = 0;
  for (const onednn::Epilogue& e : spec.epilogues) {
    if (e.kind == onednn::EpilogueKind::Bias) continue;
    const bool relu = e.kind == onednn::EpilogueKind::Eltwise && e.algorithm == dnnl::algorithm::eltwise_relu &&
                      e.alpha == 0.f;
    relus += relu, others += !relu;
  }
  return relus == 1 && others == 0;
}

ChannelsLastConvKernel::ChannelsLastConvKernel(const Graph& graph, const KernelGroup& group,
                                               const onednn::LinearSpec& spec, const ConvShape& s, InPlace in_place)
    : s_(s),
      epilogue_(graph, group, spec),
      relu_(only_relu(spec)),
      in_place_(in_place),
      in_md_(onednn::channels_last_f32({s.n, s.cin, s.ih, s.iw})),
      out_md_(onednn::channels_last_f32({s.n, s.cout, s.oh, s.ow})) {
  x_input_ = int(input_slot(group, spec.anchor.x));
  const memory::desc row_major_out = onednn::plain_f32({s_.n, s_.cout, s_.oh, s_.ow});
  for (size_t input : epilogue_.tensor_inputs()) {
    operands_.push_back({input, onednn::layout_copy(row_major_out, out_md_)});
  }
  read_input_as(size_t(x_input_), onednn::native_layout(onednn::plain_f32({s_.n, s_.cin, s_.ih, s_.iw})));
  const std::optional<StridedCopy> to_row_major = onednn::layout_copy(out_md_, row_major_out);
  ORCHID_CHECK(to_row_major) << "no copy from channels-last to NCHW";
  row_major_out_ = *to_row_major;
}

void ChannelsLastConvKernel::run(const KernelArgs& args) {
  const float* x = static_cast<const float*>(args.inputs[size_t(x_input_)]);
  float* y = static_cast<float*>(args.outputs[0]);
  epilogue_.bind(args);
  const size_t out_bytes = size_t(s_.n * s_.oh * s_.ow * s_.cout) * sizeof(float);
  for (size_t k = 0; k < operands_.size(); ++k) {
    const Operand& o = operands_[k];
    if (!o.to_channels_last) continue;  // in place
    float* copy = reinterpret_cast<float*>(onednn::conversion_buffer(2 + k, out_bytes));
    run_strided_copy(*o.to_channels_last, sizeof(float), args.inputs[o.input], copy);
    epilogue_.rebind_tensor(o.input, copy);
  }
  ChannelBlockedLayout in = in_;
  if (x_to_channels_last_) {
    float* copy = reinterpret_cast<float*>(onednn::conversion_buffer(1, in_md_.get_size()));
    run_strided_copy(*x_to_channels_last_, sizeof(float), x, copy);
    x = copy;
    in = *channel_blocked(in_md_);
  }
  float* out = native_out_ ? y : reinterpret_cast<float*>(onednn::conversion_buffer(0, out_bytes));
  compute(x, in, out);
  if (!native_out_) run_strided_copy(row_major_out_, sizeof(float), out, y);
}

bool ChannelsLastConvKernel::reads_input_at_run(size_t input) const {
  return int(input) == x_input_ || epilogue_.reads_input(input);
}

std::optional<NativeLayout> ChannelsLastConvKernel::native_output_layout(size_t output) const {
  if (output != 0 || native_out_) return std::nullopt;
  return onednn::native_layout(out_md_);
}

void ChannelsLastConvKernel::use_native_output(size_t output) {
  ORCHID_CHECK(output == 0 && !native_out_) << "no native layout for output " << output;
  native_out_ = true;
}

bool ChannelsLastConvKernel::can_read_input_as(size_t input, const NativeLayout& layout) const {
  if (layout.kind != onednn::kOneDnnLayout) return false;
  const memory::desc& md = onednn::layout_desc(layout);
  if (int(input) == x_input_) {
    if (md.dims() != in_md_.dims()) return false;
    const std::optional<ChannelBlockedLayout> blocked = channel_blocked(md);
    return (blocked && in_place_(*blocked, s_)) || md == in_md_ || onednn::layout_copy(md, in_md_);
  }
  return operand(input) && md.dims() == out_md_.dims() && (md == out_md_ || onednn::layout_copy(md, out_md_));
}

std::optional<NativeLayout> ChannelsLastConvKernel::native_input_layout(size_t input) const {
  if (operand(input)) return onednn::native_layout(out_md_);
  if (int(input) != x_input_) return std::nullopt;
  return onednn::native_layout(in_md_);
}

void ChannelsLastConvKernel::read_input_as(size_t input, const NativeLayout& layout) {
  ORCHID_CHECK(can_read_input_as(input, layout)) << "input " << input << " cannot take the layout";
  const memory::desc& md = onednn::layout_desc(layout);
  if (int(input) == x_input_) {
    const std::optional<ChannelBlockedLayout> blocked = channel_blocked(md);
    const bool direct = blocked && in_place_(*blocked, s_);
    if (direct) in_ = *blocked;
    x_to_channels_last_ = direct ? std::nullopt : onednn::layout_copy(md, in_md_);
    return;
  }
  for (Operand& o : operands_) {
    if (o.input == input) o.to_channels_last = md == out_md_ ? std::nullopt : onednn::layout_copy(md, out_md_);
  }
}

const ChannelsLastConvKernel::Operand* ChannelsLastConvKernel::operand(size_t input) const {
  for (const Operand& o : operands_) {
    if (o.input == input) return &o;
  }
  return nullptr;
}

}  // namespace direct

bool channels_last_supported(const Graph& graph, const onednn::LinearSpec& spec) {
  if (!direct::operands_supported(graph, spec) || spec.anchor.kind != onednn::LinearKind::Conv) return false;
  const direct::ConvShape s = direct::conv_shape(graph, spec.anchor);
  if (!direct::channels_last_pointwise_shape(s) && !direct::channels_last_grouped_shape(s) &&
      !direct::channels_last_depthwise_shape(s)) {
    return false;
  }
  // Runtime operands (a residual) have the output's shape.
  return std::all_of(spec.epilogues.begin(), spec.epilogues.end(), [&](const onednn::Epilogue& e) {
    return e.tensor == kNoValue || graph.type(e.tensor).shape == Shape{s.n, s.cout, s.oh, s.ow};
  });
}

std::unique_ptr<Kernel> make_channels_last_kernel(const Graph& graph, const KernelGroup& group,
                                                  const onednn::LinearSpec& spec) {
  if (!channels_last_supported(graph, spec)) return nullptr;
  const direct::ConvShape s = direct::conv_shape(graph, spec.anchor);
  if (direct::channels_last_pointwise_shape(s)) return direct::make_channels_last_pointwise(graph, group, spec, s);
  if (direct::channels_last_depthwise_shape(s)) return direct::make_channels_last_depthwise(graph, group, spec, s);
  return direct::make_channels_last_grouped(graph, group, spec, s);
}

}  // namespace orchid::runtime::cpu
