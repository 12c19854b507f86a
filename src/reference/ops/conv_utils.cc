#include "reference/ops/conv_utils.h"

#include <algorithm>
#include <sstream>

#include "support/error.h"

namespace orchid::reference {

void check_dtype(DType dtype, std::initializer_list<DType> allowed, size_t index, const char* name) {
  for (DType d : allowed) {
    if (d == dtype) return;
  }
  std::ostringstream list;
  size_t i = 0;
  for (DType d : allowed) {
    if (i > 0) list << (i + 1 == allowed.size() ? " or " : ", ");
    list << dtype_name(d);
    ++i;
  }
  ORCHID_FAIL() << "expected " << list.str() << " for input " << index << " (" << name << "), got "
                << dtype_name(dtype);
}

AutoPad parse_auto_pad(const Attributes& attrs) {
  std::string value = attrs.get_string("auto_pad", "NOTSET");
  if (value == "NOTSET" || value.empty()) return AutoPad::NotSet;
  if (value == "SAME_UPPER") return AutoPad::SameUpper;
  if (value == "SAME_LOWER") return AutoPad::SameLower;
  if (value == "VALID") return AutoPad::Valid;
  ORCHID_FAIL() << "attribute auto_pad: unknown value '" << value
                << "' (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)";
}

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// An ints attribute with exactly `size` entries, each at least `min`.
std::vector<int64_t> sized_ints(const Attributes& attrs, const char* name, size_t size,
                                int64_t fallback, int64_t min) {
  std::vector<int64_t> values = attrs.get_ints(name, std::vector<int64_t>(size, fallback));
  if (values.size() != size) {
    ORCHID_FAIL() << "attribute " << name << " has " << values.size() << " entries, expected "
                  << size;
  }
  for (int64_t v : values) {
    if (v < min) ORCHID_FAIL() << "attribute " << name << " has the value " << v << ", expected >= " << min;
  }
  return values;
}

// The common part of both geometries: kernel, strides, dilations.
WindowGeometry base_geometry(const Attributes& attrs, const Shape& in_spatial, const Shape& kernel) {
  size_t n = in_spatial.size();
  if (n == 0) ORCHID_FAIL() << "the input needs at least one spatial dimension (shape N x C x D1 x ...)";
  if (kernel.size() != n) {
    ORCHID_FAIL() << "the kernel has " << kernel.size() << " spatial dimensions but the input has " << n;
  }
  for (int64_t k : kernel) {
    if (k < 1) ORCHID_FAIL() << "kernel_shape " << shape_to_string(kernel) << " has a dimension < 1";
  }
  WindowGeometry g;
  g.in = in_spatial;
  g.kernel = kernel;
  g.strides = sized_ints(attrs, "strides", n, 1, 1);
  g.dilations = sized_ints(attrs, "dilations", n, 1, 1);
  g.out.assign(n, 0);
  g.pad_begin.assign(n, 0);
  g.pad_end.assign(n, 0);
  return g;
}

}  // namespace

Shape kernel_shape_attr(const Attributes& attrs, const Shape& weight_spatial) {
  if (!attrs.has("kernel_shape")) return weight_spatial;
  Shape kernel = attrs.get_ints("kernel_shape");
  if (!weight_spatial.empty() && kernel != weight_spatial) {
    ORCHID_FAIL() << "attribute kernel_shape " << shape_to_string(kernel)
                  << " differs from the weight's spatial shape " << shape_to_string(weight_spatial);
  }
  return kernel;
}

WindowGeometry window_geometry(const Attributes& attrs, const Shape& in_spatial, const Shape& kernel,
                               bool ceil_mode) {
  WindowGeometry g = base_geometry(attrs, in_spatial, kernel);
  size_t n = g.rank();
  AutoPad auto_pad = parse_auto_pad(attrs);
  std::vector<int64_t> pads = auto_pad == AutoPad::NotSet ? sized_ints(attrs, "pads", 2 * n, 0, 0)
                                                          : std::vector<int64_t>(2 * n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
    int64_t s = g.strides[i];
    if (auto_pad == AutoPad::SameUpper || auto_pad == AutoPad::SameLower) {
      // Output = ceil(in / stride); the padding that needs, odd extra at the
      // end for SAME_UPPER and at the beginning for SAME_LOWER.
      g.out[i] = ceil_div(g.in[i], s);
      int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * s + extent - g.in[i]);
      int64_t small = total / 2;
      g.pad_begin[i] = auto_pad == AutoPad::SameUpper ? small : total - small;
      g.pad_end[i] = total - g.pad_begin[i];
      continue;
    }
    g.pad_begin[i] = pads[i];
    g.pad_end[i] = pads[n + i];
    int64_t avail = g.in[i] + g.pad_begin[i] + g.pad_end[i] - extent;
    if (avail < 0) {
      ORCHID_FAIL() << "the window (extent " << extent << " in spatial dimension " << i
                    << ") is larger than the padded input (" << g.in[i] + g.pad_begin[i] + g.pad_end[i]
                    << ")";
    }
    g.out[i] = (ceil_mode ? ceil_div(avail, s) : avail / s) + 1;
    // ceil_mode: a last window that would start in the end padding is dropped.
    if (ceil_mode && (g.out[i] - 1) * s >= g.in[i] + g.pad_begin[i]) --g.out[i];
  }
  return g;
}

WindowGeometry conv_transpose_geometry(const Attributes& attrs, const Shape& in_spatial,
                                       const Shape& kernel) {
  WindowGeometry g = base_geometry(attrs, in_spatial, kernel);
  size_t n = g.rank();
  AutoPad auto_pad = parse_auto_pad(attrs);
  std::vector<int64_t> pads = auto_pad == AutoPad::NotSet ? sized_ints(attrs, "pads", 2 * n, 0, 0)
                                                          : std::vector<int64_t>(2 * n, 0);
  std::vector<int64_t> output_padding = sized_ints(attrs, "output_padding", n, 0, 0);
  std::vector<int64_t> output_shape = attrs.get_ints("output_shape");
  if (!output_shape.empty()) {
    // Either the spatial shape or the whole output shape (N, C, spatial...).
    if (output_shape.size() == n + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
    if (output_shape.size() != n) {
      ORCHID_FAIL() << "attribute output_shape has " << attrs.get_ints("output_shape").size()
                    << " entries, expected " << n << " (or " << n + 2 << ")";
    }
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
    int64_t natural = g.strides[i] * (g.in[i] - 1) + output_padding[i] + extent;
    bool same = auto_pad == AutoPad::SameUpper || auto_pad == AutoPad::SameLower;
    if (!output_shape.empty() || same) {
      // The ONNX spec: total_padding = natural - output_shape; SAME_UPPER puts
      // total/2 at the beginning, anything else puts total/2 at the end
      // (floor division: a negative total extends the output at the end).
      g.out[i] = !output_shape.empty() ? output_shape[i] : g.in[i] * g.strides[i];
      int64_t total = natural - g.out[i];
      int64_t half = floor_div(total, 2);
      g.pad_begin[i] = auto_pad == AutoPad::SameUpper ? half : total - half;
      g.pad_end[i] = total - g.pad_begin[i];
    } else {
      g.pad_begin[i] = pads[i];
      g.pad_end[i] = pads[n + i];
      g.out[i] = natural - g.pad_begin[i] - g.pad_end[i];
    }
    if (g.out[i] < 1) {
      ORCHID_FAIL() << "the output size in spatial dimension " << i << " would be " << g.out[i];
    }
  }
  return g;
}

Window3 to_window3(const WindowGeometry& g) {
  size_t n = g.rank();
  if (n == 0 || n > 3) {
    ORCHID_FAIL() << "only 1 to 3 spatial dimensions are supported, got " << n;
  }
  Window3 w{};
  for (size_t j = 0; j < 3; ++j) {
    if (j < 3 - n) {
      w.in[j] = w.out[j] = w.k[j] = w.s[j] = w.d[j] = 1;
      w.p[j] = w.p_end[j] = 0;
      continue;
    }
    size_t i = j - (3 - n);
    w.in[j] = g.in[i];
    w.out[j] = g.out[i];
    w.k[j] = g.kernel[i];
    w.s[j] = g.strides[i];
    w.d[j] = g.dilations[i];
    w.p[j] = g.pad_begin[i];
    w.p_end[j] = g.pad_end[i];
  }
  return w;
}

std::pair<int64_t, int64_t> valid_range(int64_t count, int64_t limit, int64_t stride, int64_t offset) {
  int64_t first = offset >= 0 ? 0 : ceil_div(-offset, stride);
  int64_t last = limit - 1 - offset;  // p * stride <= last
  int64_t second = last < 0 ? 0 : last / stride + 1;
  second = std::min(second, count);
  first = std::min(first, second);
  return {first, second};
}

namespace {

// 1x1 kernels with unit strides and no padding see the spatial dimensions as
// one long row, which makes the innermost loop long.
Window3 flatten_pointwise(const Window3& w) {
  for (int j = 0; j < 3; ++j) {
    if (w.k[j] != 1 || w.s[j] != 1 || w.p[j] != 0 || w.p_end[j] != 0 || w.in[j] != w.out[j]) return w;
  }
  Window3 flat = w;
  flat.in[0] = flat.in[1] = flat.out[0] = flat.out[1] = 1;
  flat.in[2] = flat.out[2] = w.in_size();
  return flat;
}

}  // namespace

// For every output channel, the sum over its group's input channels and
// kernel taps of a shifted, strided input plane scaled by one weight. The
// ranges of output positions whose input is inside the (unpadded) input are
// computed per tap, so the innermost loop over the last output dimension has
// no bounds checks and runs over contiguous memory for unit strides.
template <typename Acc>
void conv_forward(const ConvProblem& problem, const Acc* x, const Acc* w, const Acc* bias, Acc* y) {
  const Window3 g = flatten_pointwise(problem.window);
  const int64_t C = problem.in_channels, M = problem.out_channels;
  const int64_t Cg = C / problem.groups, Mg = M / problem.groups;
  const int64_t isz = g.in_size(), osz = g.out_size(), ksz = g.k_size();
  for (int64_t n = 0; n < problem.batch; ++n) {
    for (int64_t oc = 0; oc < M; ++oc) {
      Acc* __restrict yc = y + (n * M + oc) * osz;
      std::fill(yc, yc + osz, bias ? bias[oc] : Acc(0));
      for (int64_t icg = 0; icg < Cg; ++icg) {
        const Acc* xc = x + (n * C + (oc / Mg) * Cg + icg) * isz;
        const Acc* wc = w + (oc * Cg + icg) * ksz;
        for (int64_t kd = 0; kd < g.k[0]; ++kd) {
          auto [od0, od1] = valid_range(g.out[0], g.in[0], g.s[0], kd * g.d[0] - g.p[0]);
          for (int64_t kh = 0; kh < g.k[1]; ++kh) {
            auto [oh0, oh1] = valid_range(g.out[1], g.in[1], g.s[1], kh * g.d[1] - g.p[1]);
            for (int64_t kw = 0; kw < g.k[2]; ++kw) {
              const int64_t xoff = kw * g.d[2] - g.p[2];
              auto [ow0, ow1] = valid_range(g.out[2], g.in[2], g.s[2], xoff);
              const Acc wv = wc[(kd * g.k[1] + kh) * g.k[2] + kw];
              for (int64_t od = od0; od < od1; ++od) {
                const int64_t id = od * g.s[0] + kd * g.d[0] - g.p[0];
                for (int64_t oh = oh0; oh < oh1; ++oh) {
                  const int64_t ih = oh * g.s[1] + kh * g.d[1] - g.p[1];
                  Acc* __restrict yrow = yc + (od * g.out[1] + oh) * g.out[2];
                  const Acc* __restrict xrow = xc + (id * g.in[1] + ih) * g.in[2];
                  if (g.s[2] == 1) {
                    for (int64_t ow = ow0; ow < ow1; ++ow) yrow[ow] += wv * xrow[ow + xoff];
                  } else {
                    const int64_t s = g.s[2];
                    for (int64_t ow = ow0; ow < ow1; ++ow) yrow[ow] += wv * xrow[ow * s + xoff];
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

// The adjoint of conv_forward: every input position scatters its value times
// each kernel tap to output position in * stride + tap * dilation - pad.
template <typename Acc>
void conv_transpose_forward(const ConvProblem& problem, const Acc* x, const Acc* w, const Acc* bias,
                            Acc* y) {
  const Window3& g = problem.window;
  const int64_t C = problem.in_channels, M = problem.out_channels;
  const int64_t Cg = C / problem.groups, Mg = M / problem.groups;
  const int64_t isz = g.in_size(), osz = g.out_size(), ksz = g.k_size();
  for (int64_t n = 0; n < problem.batch; ++n) {
    for (int64_t oc = 0; oc < M; ++oc) {
      std::fill(y + (n * M + oc) * osz, y + (n * M + oc + 1) * osz, bias ? bias[oc] : Acc(0));
    }
    for (int64_t ic = 0; ic < C; ++ic) {
      const Acc* xc = x + (n * C + ic) * isz;
      for (int64_t ocg = 0; ocg < Mg; ++ocg) {
        Acc* yc = y + (n * M + (ic / Cg) * Mg + ocg) * osz;
        const Acc* wc = w + (ic * Mg + ocg) * ksz;
        for (int64_t kd = 0; kd < g.k[0]; ++kd) {
          auto [id0, id1] = valid_range(g.in[0], g.out[0], g.s[0], kd * g.d[0] - g.p[0]);
          for (int64_t kh = 0; kh < g.k[1]; ++kh) {
            auto [ih0, ih1] = valid_range(g.in[1], g.out[1], g.s[1], kh * g.d[1] - g.p[1]);
            for (int64_t kw = 0; kw < g.k[2]; ++kw) {
              const int64_t yoff = kw * g.d[2] - g.p[2];
              auto [iw0, iw1] = valid_range(g.in[2], g.out[2], g.s[2], yoff);
              const Acc wv = wc[(kd * g.k[1] + kh) * g.k[2] + kw];
              for (int64_t id = id0; id < id1; ++id) {
                const int64_t od = id * g.s[0] + kd * g.d[0] - g.p[0];
                for (int64_t ih = ih0; ih < ih1; ++ih) {
                  const int64_t oh = ih * g.s[1] + kh * g.d[1] - g.p[1];
                  Acc* __restrict yrow = yc + (od * g.out[1] + oh) * g.out[2];
                  const Acc* __restrict xrow = xc + (id * g.in[1] + ih) * g.in[2];
                  const int64_t s = g.s[2];
                  for (int64_t iw = iw0; iw < iw1; ++iw) yrow[iw * s + yoff] += wv * xrow[iw];
                }
              }
            }
          }
        }
      }
    }
  }
}

template void conv_forward<double>(const ConvProblem&, const double*, const double*, const double*, double*);
template void conv_forward<int64_t>(const ConvProblem&, const int64_t*, const int64_t*, const int64_t*,
                                    int64_t*);
template void conv_transpose_forward<double>(const ConvProblem&, const double*, const double*,
                                             const double*, double*);

}  // namespace orchid::reference
