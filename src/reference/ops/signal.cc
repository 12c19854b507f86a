// Signal processing: DFT, STFT, HannWindow, HammingWindow, BlackmanWindow,
// MelWeightMatrix; and Det (a small linear-algebra section at the end).
//
// Complex tensors are real tensors with a last dimension of 2 (real,
// imaginary); a real signal has a last dimension of 1. Everything is computed
// in double with the plain O(n^2) transform.
//
// DFT(input, dft_length?, axis?) (opset 17..20): the axis is input 2 (opset
// 20) when present, else the attribute `axis` (opset 17, default 1). It counts
// over the input's full rank (including the complex dimension), negative from
// the back, and must not be the last dimension. dft_length zero-pads or
// truncates the signal along the axis; onesided keeps the n/2+1 first bins;
// inverse uses exp(+2 pi i jk/n) and divides by n. (Opset 20 models whose
// axis input is omitted mean axis -2: the importer must then add that input.)
//
// Window sizes, dft_length, STFT's frame_step/frame_length and the inputs of
// MelWeightMatrix determine output shapes, so they must be known at load time.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "reference/ops/extra_utils.h"
#include "reference/ops/op_utils.h"
#include "reference/ops/ops.h"

namespace orchid::reference {
namespace {

using extra::f64;

int64_t scalar_int(const Tensor& t, size_t index, const char* name) {
  if (t.numel() != 1) {
    ORCHID_FAIL() << "input " << index << " (" << name << ") must hold one value, got shape "
                  << shape_to_string(t.shape());
  }
  return t.at_i64(0);
}

void require_int_input(const InferContext& ctx, size_t i, const char* name) {
  DType d = ctx.input(i).dtype;
  if (d != DType::Int32 && d != DType::Int64) {
    ORCHID_FAIL() << "expected an int32 or int64 tensor for input " << i << " (" << name << "), got " << dtype_name(d);
  }
}

DType output_datatype(const Attributes& attrs) {
  int code = int(attrs.get_int("output_datatype", 1));
  DType d;
  if (!dtype_from_onnx(code, &d) || d == DType::Bool) {
    ORCHID_FAIL() << "unsupported output_datatype " << onnx_dtype_name(code);
  }
  return d;
}

// ---- DFT ---------------------------------------------------------------------

struct DftParams {
  int64_t axis;
  int64_t length;  // transform length n
  int64_t out_bins;
  bool inverse;
};

void check_signal(const TensorType& x, size_t index, const char* name) {
  require_dtype(x.dtype, TypeClass::Float, index, name);
  if (x.rank() < 2 || (x.shape.back() != 1 && x.shape.back() != 2)) {
    ORCHID_FAIL() << "input " << index << " (" << name
                  << ") must have a last dimension of 1 (real) or 2 (complex), got shape " << shape_to_string(x.shape);
  }
}

// The 1-D DFT of n points of a strided (complex) signal, len_in of them
// present (the rest are zeros); writes out_bins complex values.
void dft_1d(const double* re, const double* im, int64_t in_stride, int64_t len_in, int64_t n, int64_t out_bins,
            bool inverse, double* out, int64_t out_stride) {
  double sign = inverse ? 1.0 : -1.0;
  int64_t used = std::min(len_in, n);
  for (int64_t k = 0; k < out_bins; ++k) {
    double sr = 0, si = 0;
    for (int64_t j = 0; j < used; ++j) {
      // Angle reduced modulo n in integers for accuracy.
      double angle = sign * 2 * std::numbers::pi * double((j * k) % n) / double(n);
      double c = std::cos(angle), s = std::sin(angle);
      double xr = re[j * in_stride], xi = im ? im[j * in_stride] : 0.0;
      sr += xr * c - xi * s;
      si += xr * s + xi * c;
    }
    if (inverse) {
      sr /= double(n);
      si /= double(n);
    }
    out[k * out_stride] = sr;
    out[k * out_stride + 1] = si;
  }
}

OpSchema dft_schema() {
  OpSchema s;
  s.op = "DFT";
  s.min_inputs = 1;
  s.max_inputs = 3;
  auto params = [](const Attributes& attrs, const Shape& shape, const Tensor* length, const Tensor* axis) {
    DftParams p;
    int64_t rank = int64_t(shape.size());
    p.axis = axis ? scalar_int(*axis, 2, "axis") : attrs.get_int("axis", 1);
    p.axis = normalize_axis(p.axis, rank);
    if (p.axis == rank - 1) ORCHID_FAIL() << "the DFT axis must not be the last (complex) dimension";
    p.length = length ? scalar_int(*length, 1, "dft_length") : shape[size_t(p.axis)];
    if (p.length < 1) ORCHID_FAIL() << "dft_length must be positive, got " << p.length;
    p.inverse = attrs.get_int("inverse", 0) != 0;
    bool onesided = attrs.get_int("onesided", 0) != 0;
    if (onesided && p.inverse) ORCHID_FAIL() << "onesided inverse DFT is not supported";
    p.out_bins = onesided ? p.length / 2 + 1 : p.length;
    return p;
  };
  s.infer = [params](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    check_signal(x, 0, "input");
    const Tensor* length = nullptr;
    const Tensor* axis = nullptr;
    if (ctx.has_input(1)) {
      require_int_input(ctx, 1, "dft_length");
      length = &ctx.require_value(1, "dft_length");
    }
    if (ctx.has_input(2)) {
      require_int_input(ctx, 2, "axis");
      axis = &ctx.require_value(2, "axis");
    }
    DftParams p = params(ctx.attrs(), x.shape, length, axis);
    Shape out = x.shape;
    out[size_t(p.axis)] = p.out_bins;
    out.back() = 2;
    return one(x.dtype, out);
  };
  s.eval = [params](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    DftParams p = params(ctx.attrs(), in, ctx.has_input(1) ? ctx.inputs[1] : nullptr,
                         ctx.has_input(2) ? ctx.inputs[2] : nullptr);
    const Shape& out_shape = ctx.output_types[0].shape;
    std::vector<double> v = f64(x);
    std::vector<double> y(size_t(shape_numel(out_shape)));
    bool complex = in.back() == 2;
    std::vector<int64_t> in_strides = shape_strides(in), out_strides = shape_strides(out_shape);
    // Iterate over every position of the other (non-axis, non-complex) dims.
    Shape outer(in.begin(), in.end() - 1);
    outer[size_t(p.axis)] = 1;
    for_each_index(outer, [&](const std::vector<int64_t>& idx) {
      int64_t in_off = 0, out_off = 0;
      for (size_t d = 0; d < idx.size(); ++d) {
        in_off += idx[d] * in_strides[d];
        out_off += idx[d] * out_strides[d];
      }
      const double* re = &v[size_t(in_off)];
      dft_1d(re, complex ? re + 1 : nullptr, in_strides[size_t(p.axis)], in[size_t(p.axis)], p.length, p.out_bins,
             p.inverse, &y[size_t(out_off)], out_strides[size_t(p.axis)]);
    });
    return std::vector<Tensor>{extra::make_tensor(ctx.output_types[0], y)};
  };
  return s;
}

// ---- STFT --------------------------------------------------------------------

// STFT(signal [batch, length, 1|2], frame_step, window? [frame_length],
// frame_length?) -> [batch, frames, bins, 2] with frames = 1 + (length -
// frame_length) / frame_step and bins = frame_length/2+1 when onesided
// (default 1; only for real signals) else frame_length. Each frame is
// multiplied by the window (rectangular when omitted) and transformed.
struct StftParams {
  int64_t step, frame_length, frames, bins;
};

StftParams stft_params(const Attributes& attrs, const Shape& signal, const Tensor& step, const Shape* window_shape,
                       const Tensor* frame_length) {
  StftParams p;
  p.step = scalar_int(step, 1, "frame_step");
  if (p.step < 1) ORCHID_FAIL() << "frame_step must be positive, got " << p.step;
  if (frame_length) {
    p.frame_length = scalar_int(*frame_length, 3, "frame_length");
  } else if (window_shape) {
    p.frame_length = (*window_shape)[0];
  } else {
    ORCHID_FAIL() << "STFT needs a window or a frame_length";
  }
  if (window_shape && (*window_shape)[0] != p.frame_length) {
    ORCHID_FAIL() << "the window's length " << (*window_shape)[0] << " differs from frame_length " << p.frame_length;
  }
  if (p.frame_length < 1 || p.frame_length > signal[1]) {
    ORCHID_FAIL() << "frame_length " << p.frame_length << " must be in [1, " << signal[1] << "] (the signal length)";
  }
  bool onesided = attrs.get_int("onesided", 1) != 0;
  if (onesided && signal[2] == 2) ORCHID_FAIL() << "onesided STFT needs a real signal (last dimension 1)";
  p.frames = 1 + (signal[1] - p.frame_length) / p.step;
  p.bins = onesided ? p.frame_length / 2 + 1 : p.frame_length;
  return p;
}

OpSchema stft_schema() {
  OpSchema s;
  s.op = "STFT";
  s.min_inputs = 2;
  s.max_inputs = 4;
  s.infer = [](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    check_signal(x, 0, "signal");
    extra::require_rank(x, 3, 0, "signal");
    require_int_input(ctx, 1, "frame_step");
    const Tensor& step = ctx.require_value(1, "frame_step");
    const Shape* window = nullptr;
    if (ctx.has_input(2)) {
      require_dtype(ctx.input(2).dtype, TypeClass::Float, 2, "window");
      extra::require_rank(ctx.input(2), 1, 2, "window");
      window = &ctx.input(2).shape;
    }
    const Tensor* frame_length = nullptr;
    if (ctx.has_input(3)) {
      require_int_input(ctx, 3, "frame_length");
      frame_length = &ctx.require_value(3, "frame_length");
    }
    StftParams p = stft_params(ctx.attrs(), x.shape, step, window, frame_length);
    return one(x.dtype, {x.shape[0], p.frames, p.bins, 2});
  };
  s.eval = [](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    const Shape* window_shape = ctx.has_input(2) ? &ctx.input(2).shape() : nullptr;
    StftParams p = stft_params(ctx.attrs(), in, ctx.input(1), window_shape,
                               ctx.has_input(3) ? ctx.inputs[3] : nullptr);
    std::vector<double> window = ctx.has_input(2) ? f64(ctx.input(2)) : std::vector<double>(size_t(p.frame_length), 1.0);
    std::vector<double> v = f64(x);
    int64_t batch = in[0], length = in[1], channels = in[2];
    std::vector<double> y(size_t(batch * p.frames * p.bins * 2));
    std::vector<double> re(size_t(p.frame_length)), im(size_t(p.frame_length));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t f = 0; f < p.frames; ++f) {
        for (int64_t j = 0; j < p.frame_length; ++j) {
          const double* sample = &v[size_t((b * length + f * p.step + j) * channels)];
          re[size_t(j)] = sample[0] * window[size_t(j)];
          im[size_t(j)] = channels == 2 ? sample[1] * window[size_t(j)] : 0.0;
        }
        dft_1d(re.data(), im.data(), 1, p.frame_length, p.frame_length, p.bins, false,
               &y[size_t((b * p.frames + f) * p.bins * 2)], 2);
      }
    }
    return std::vector<Tensor>{extra::make_tensor(ctx.output_types[0], y)};
  };
  return s;
}

// ---- Windows -----------------------------------------------------------------

// HannWindow / HammingWindow / BlackmanWindow(size) -> [size] of
// output_datatype (default float32). periodic (default 1) uses the
// denominator N, else N - 1:
//   Hann 0.5 - 0.5 cos(2 pi n / D); Hamming 25/46 - 21/46 cos(2 pi n / D);
//   Blackman 0.42 - 0.5 cos(2 pi n / D) + 0.08 cos(4 pi n / D).
enum class Window { Hann, Hamming, Blackman };

OpSchema window_schema(const char* op, Window kind) {
  OpSchema s;
  s.op = op;
  s.min_inputs = 1;
  s.max_inputs = 1;
  s.infer = [](const InferContext& ctx) {
    require_int_input(ctx, 0, "size");
    int64_t n = scalar_int(ctx.require_value(0, "size"), 0, "size");
    if (n < 0) ORCHID_FAIL() << "the window size must not be negative, got " << n;
    return one(output_datatype(ctx.attrs()), {n});
  };
  s.eval = [kind](const EvalContext& ctx) {
    int64_t n = ctx.output_types[0].shape[0];
    bool periodic = ctx.attrs().get_int("periodic", 1) != 0;
    double denom = double(periodic ? n : n - 1);
    std::vector<double> y(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      double t = denom > 0 ? 2 * std::numbers::pi * double(i) / denom : 0.0;
      switch (kind) {
        case Window::Hann: y[size_t(i)] = 0.5 - 0.5 * std::cos(t); break;
        case Window::Hamming: y[size_t(i)] = 25.0 / 46.0 - (1 - 25.0 / 46.0) * std::cos(t); break;
        case Window::Blackman: y[size_t(i)] = 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2 * t); break;
      }
    }
    return std::vector<Tensor>{extra::make_tensor(ctx.output_types[0], y)};
  };
  return s;
}

// ---- MelWeightMatrix -----------------------------------------------------------

// MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
// upper_edge_hertz) -> [dft_length/2+1, num_mel_bins] of output_datatype:
// triangular filters between num_mel_bins + 2 points, as the ONNX reference
// computes them (including its mel step of (high - low) / (num_mel_bins + 2)).
std::vector<double> mel_weights(int64_t mel_bins, int64_t dft_length, int64_t sample_rate, double lower, double upper) {
  int64_t spectrogram_bins = dft_length / 2 + 1;
  auto to_mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  double low_mel = to_mel(lower), high_mel = to_mel(upper);
  double step = (high_mel - low_mel) / double(mel_bins + 2);
  std::vector<int64_t> points(size_t(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    double hz = 700 * (std::pow(10.0, (double(i) * step + low_mel) / 2595) - 1);
    points[size_t(i)] = int64_t(std::floor(double(dft_length + 1) * hz / double(sample_rate)));
  }
  std::vector<double> out(size_t(spectrogram_bins * mel_bins), 0.0);
  auto set = [&](int64_t row, int64_t col, double value) {
    if (row < 0 || row >= spectrogram_bins) {
      ORCHID_FAIL() << "mel filter point " << row << " is outside the " << spectrogram_bins
                    << " spectrogram bins (upper_edge_hertz above the Nyquist frequency?)";
    }
    out[size_t(row * mel_bins + col)] = value;
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    int64_t lo = points[size_t(i)], center = points[size_t(i + 1)], hi = points[size_t(i + 2)];
    if (center == lo) {
      set(center, i, 1.0);
    } else {
      for (int64_t j = lo; j <= center; ++j) set(j, i, double(j - lo) / double(center - lo));
    }
    for (int64_t j = center; j < hi; ++j) set(j, i, double(hi - j) / double(hi - center));
  }
  return out;
}

OpSchema mel_schema() {
  OpSchema s;
  s.op = "MelWeightMatrix";
  s.min_inputs = 5;
  s.max_inputs = 5;
  s.infer = [](const InferContext& ctx) {
    static const char* names[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
    for (size_t i = 0; i < 3; ++i) require_int_input(ctx, i, names[i]);
    for (size_t i = 3; i < 5; ++i) require_dtype(ctx.input(i).dtype, TypeClass::Float, i, names[i]);
    int64_t mel_bins = scalar_int(ctx.require_value(0, names[0]), 0, names[0]);
    int64_t dft_length = scalar_int(ctx.require_value(1, names[1]), 1, names[1]);
    if (mel_bins < 1 || dft_length < 1) {
      ORCHID_FAIL() << "num_mel_bins and dft_length must be positive, got " << mel_bins << " and " << dft_length;
    }
    return one(output_datatype(ctx.attrs()), {dft_length / 2 + 1, mel_bins});
  };
  s.eval = [](const EvalContext& ctx) {
    int64_t sample_rate = scalar_int(ctx.input(2), 2, "sample_rate");
    if (sample_rate < 1) ORCHID_FAIL() << "sample_rate must be positive, got " << sample_rate;
    std::vector<double> w = mel_weights(ctx.output_types[0].shape[1], scalar_int(ctx.input(1), 1, "dft_length"),
                                        sample_rate, ctx.input(3).at_f64(0), ctx.input(4).at_f64(0));
    return std::vector<Tensor>{extra::make_tensor(ctx.output_types[0], w)};
  };
  return s;
}

// ---- Det -----------------------------------------------------------------------

// Det(X [*, M, M]) -> [*]: LU decomposition with partial pivoting in double.
double determinant(std::vector<double> a, int64_t m) {
  double det = 1;
  for (int64_t col = 0; col < m; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < m; ++r) {
      if (std::abs(a[size_t(r * m + col)]) > std::abs(a[size_t(pivot * m + col)])) pivot = r;
    }
    if (a[size_t(pivot * m + col)] == 0) return 0;
    if (pivot != col) {
      for (int64_t k = 0; k < m; ++k) std::swap(a[size_t(pivot * m + k)], a[size_t(col * m + k)]);
      det = -det;
    }
    double p = a[size_t(col * m + col)];
    det *= p;
    for (int64_t r = col + 1; r < m; ++r) {
      double factor = a[size_t(r * m + col)] / p;
      for (int64_t k = col; k < m; ++k) a[size_t(r * m + k)] -= factor * a[size_t(col * m + k)];
    }
  }
  return det;
}

OpSchema det_schema() {
  OpSchema s;
  s.op = "Det";
  s.min_inputs = 1;
  s.max_inputs = 1;
  s.infer = [](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    require_dtype(x.dtype, TypeClass::Float, 0, "X");
    if (x.rank() < 2 || x.shape[x.rank() - 1] != x.shape[x.rank() - 2]) {
      ORCHID_FAIL() << "input 0 (X) must have shape [*, M, M], got " << shape_to_string(x.shape);
    }
    return one(x.dtype, Shape(x.shape.begin(), x.shape.end() - 2));
  };
  s.eval = [](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    int64_t m = x.shape().back();
    std::vector<double> v = f64(x);
    int64_t count = shape_numel(ctx.output_types[0].shape);
    std::vector<double> y(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      y[size_t(i)] = determinant(std::vector<double>(v.begin() + i * m * m, v.begin() + (i + 1) * m * m), m);
    }
    return std::vector<Tensor>{extra::make_tensor(ctx.output_types[0], y)};
  };
  return s;
}

}  // namespace

void register_signal_ops(OpRegistry& registry) {
  registry.add(dft_schema());
  registry.add(stft_schema());
  registry.add(window_schema("HannWindow", Window::Hann));
  registry.add(window_schema("HammingWindow", Window::Hamming));
  registry.add(window_schema("BlackmanWindow", Window::Blackman));
  registry.add(mel_schema());
  registry.add(det_schema());
}

}  // namespace orchid::reference
