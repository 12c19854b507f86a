// Fission of DFT and STFT (semantics: src/reference/ops/signal.cc) into one
// MatMul with a constant transform matrix.
//
// A (complex) signal is a real tensor whose last dimension holds (re) or
// (re, im). Moving the transformed axis next to that dimension and merging the
// two gives rows of n*c interleaved values; the DFT is then one MatMul with an
// [n*c, 2*bins] matrix M whose output columns are (re, im) per bin:
//   re_k = sum_j xr_j cos(a_jk) - xi_j sin(a_jk)
//   im_k = sum_j xr_j sin(a_jk) + xi_j cos(a_jk),   a_jk = -+2 pi (jk mod n)/n
// The inverse transform's 1/n is folded into M. STFT frames the signal with a
// constant-index Gather and folds the window into M (by a Mul that folds when
// the window is a constant).
//
// The matrix is dense, O(n^2) in the transform length (n = 2048 complex
// points: 64 MiB of float32), which is what kernel selection then weighs
// against an FFT kernel for the opaque operator.
//
// DFT and STFT are listed as opaque in primitive.cc, so the driver keeps them
// whole and these rules run only once that entry is dropped.
//
// Also here: the generators that survive import when an input is not a
// constant: EyeLike (depends only on its input's type) and MelWeightMatrix
// (with a non-constant sample rate or edge frequencies).
#include <cmath>
#include <numbers>

#include "fission/rules.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

int64_t constant_scalar(const Node& node, FissionBuilder& b, size_t i, const char* name) {
  const Tensor* t = b.constant_value(node.inputs[i]);
  if (!t || t->numel() != 1) throw Error(node.describe() + ": input '" + name + "' must be a constant scalar");
  return t->at_i64(0);
}

bool has_input(const Node& node, size_t i) { return i < node.inputs.size() && node.inputs[i] != kNoValue; }

// The [n*c, 2*bins] DFT matrix for n input points (c = 1 real, 2 complex),
// transform length `length` (the angle's period) and `bins` output bins.
Tensor dft_matrix(DType dtype, int64_t n, int64_t c, int64_t length, int64_t bins, bool inverse) {
  Tensor m(dtype, {n * c, 2 * bins});
  double sign = inverse ? 1.0 : -1.0;
  double scale = inverse ? 1.0 / double(length) : 1.0;
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t k = 0; k < bins; ++k) {
      // The angle reduced modulo the length in integers, for accuracy.
      double angle = sign * 2 * std::numbers::pi * double((j * k) % length) / double(length);
      double cs = std::cos(angle) * scale, sn = std::sin(angle) * scale;
      m.set_f64((j * c) * 2 * bins + 2 * k, cs);
      m.set_f64((j * c) * 2 * bins + 2 * k + 1, sn);
      if (c == 2) {
        m.set_f64((j * c + 1) * 2 * bins + 2 * k, -sn);
        m.set_f64((j * c + 1) * 2 * bins + 2 * k + 1, cs);
      }
    }
  }
  return m;
}

// Applies `matrix` [n*c, 2*bins] to x [..., n, c] -> [..., bins, 2].
ValueId apply_dft_matrix(FissionBuilder& b, ValueId x, ValueId matrix) {
  Shape shape = b.shape(x);
  int64_t bins = b.shape(matrix)[1] / 2;
  Shape rows(shape.begin(), shape.end() - 2);
  rows.push_back(shape[shape.size() - 2] * shape.back());
  ValueId y = b.binary("MatMul", b.reshape(x, rows), matrix);
  Shape out(shape.begin(), shape.end() - 2);
  out.push_back(bins);
  out.push_back(2);
  return b.reshape(y, out);
}

// DFT(input, dft_length?, axis?): the axis input (opset 20, canonical form)
// or attribute; dft_length zero-pads (the padding contributes nothing, so it
// is left out) or truncates (a Slice).
std::vector<ValueId> dft_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  int64_t rank = int64_t(b.rank(x));
  int64_t axis = has_input(node, 2) ? constant_scalar(node, b, 2, "axis") : node.attrs.get_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank - 1) throw Error(node.describe() + ": DFT axis out of range");
  int64_t n = b.shape(x)[size_t(axis)];
  int64_t length = has_input(node, 1) ? constant_scalar(node, b, 1, "dft_length") : n;
  bool inverse = node.attrs.get_int("inverse", 0) != 0;
  bool onesided = node.attrs.get_int("onesided", 0) != 0;
  if (length < 1 || (inverse && onesided)) throw Error(node.describe() + ": unsupported DFT parameters");
  int64_t bins = onesided ? length / 2 + 1 : length;
  if (length < n) {
    x = b.slice(x, {0}, {length}, {axis});
    n = length;
  }
  // Move the axis next to the complex dimension: [others..., n, c].
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d) {
    if (d != axis) perm.push_back(d);
  }
  perm.push_back(axis);
  perm.push_back(rank - 1);
  std::vector<int64_t> inverse_perm(size_t(rank), 0);
  for (int64_t d = 0; d < rank; ++d) inverse_perm[size_t(perm[size_t(d)])] = d;
  int64_t c = b.shape(x).back();
  ValueId matrix = b.constant(dft_matrix(b.dtype(x), n, c, length, bins, inverse));
  ValueId y = apply_dft_matrix(b, b.transpose(x, perm), matrix);
  return {b.transpose(y, inverse_perm)};
}

// STFT(signal [batch, length, c], frame_step, window? [frame_length],
// frame_length?) -> [batch, frames, bins, 2].
std::vector<ValueId> stft_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  const Shape& shape = b.shape(x);
  int64_t step = constant_scalar(node, b, 1, "frame_step");
  int64_t frame_length = has_input(node, 3)   ? constant_scalar(node, b, 3, "frame_length")
                         : has_input(node, 2) ? b.shape(node.inputs[2])[0]
                                              : 0;
  if (step < 1 || frame_length < 1 || frame_length > shape[1]) {
    throw Error(node.describe() + ": unsupported STFT parameters");
  }
  bool onesided = node.attrs.get_int("onesided", 1) != 0;
  int64_t frames = 1 + (shape[1] - frame_length) / step;
  int64_t bins = onesided ? frame_length / 2 + 1 : frame_length;
  int64_t c = shape[2];
  // Frame f, sample j is signal sample f * step + j: a constant index map.
  Tensor index(DType::Int64, {frames, frame_length});
  for (int64_t f = 0; f < frames; ++f) {
    for (int64_t j = 0; j < frame_length; ++j) index.set_f64(f * frame_length + j, double(f * step + j));
  }
  Attributes gather_attrs;
  gather_attrs.set("axis", int64_t(1));
  ValueId framed = b.add1("Gather", {x, b.constant(index)}, gather_attrs);  // [batch, frames, fl, c]
  ValueId matrix = b.constant(dft_matrix(b.dtype(x), frame_length, c, frame_length, bins, false));
  if (has_input(node, 2)) {
    // Row (j, ri) of the matrix scales sample j: multiply by window[j].
    ValueId w = b.reshape(node.inputs[2], {frame_length, 1, 1});
    ValueId m3 = b.reshape(matrix, {frame_length, c, 2 * bins});
    matrix = b.reshape(b.binary("Mul", m3, w), {frame_length * c, 2 * bins});
  }
  return {apply_dft_matrix(b, framed, matrix)};
}

// ---- Generators left unfolded --------------------------------------------------

// EyeLike(input): its value depends only on the input's type, so it is the
// operator evaluated on a zero tensor of that type (folded at fission time).
std::vector<ValueId> eye_like_rule(const Node& node, FissionBuilder& b) {
  return {b.add1("EyeLike", {b.constant(Tensor(b.type(node.inputs[0])))}, node.attrs)};
}

// A scalar input as float64 (rank 0).
ValueId scalar_f64(FissionBuilder& b, ValueId x) { return b.cast(b.reshape(x, {}), DType::Float64); }

// The mel points of MelWeightMatrix: floor((dft_length + 1) * hz_i /
// sample_rate) for i < num_mel_bins + 2, hz_i evenly spaced on the mel scale
// (with the ONNX reference's step (high - low) / (num_mel_bins + 2)). Computed
// in float64 with the reference's operation order, so Floor sees the same
// values.
ValueId mel_points(const Node& node, FissionBuilder& b, int64_t mel_bins, int64_t dft_length) {
  auto k = [&](double v) { return b.scalar(v, DType::Float64); };
  auto to_mel = [&](ValueId hz) {
    ValueId ratio = b.binary("Add", k(1), b.binary("Div", hz, k(700)));
    return b.binary("Mul", k(2595), b.binary("Div", b.unary("Log", ratio), k(std::log(10.0))));
  };
  ValueId low = to_mel(scalar_f64(b, node.inputs[3]));
  ValueId high = to_mel(scalar_f64(b, node.inputs[4]));
  ValueId step = b.binary("Div", b.binary("Sub", high, low), k(double(mel_bins + 2)));
  Tensor index(DType::Float64, {mel_bins + 2});
  for (int64_t i = 0; i < mel_bins + 2; ++i) index.set_f64(i, double(i));
  ValueId mel = b.binary("Div", b.binary("Add", b.binary("Mul", b.constant(index), step), low), k(2595));
  ValueId hz = b.binary("Mul", k(700), b.binary("Sub", b.binary("Pow", k(10), mel), k(1)));
  ValueId scaled = b.binary("Mul", k(double(dft_length + 1)), hz);
  return b.unary("Floor", b.binary("Div", scaled, scalar_f64(b, node.inputs[2])));
}

// MelWeightMatrix with a sample rate or edge frequencies that are not
// constants (else it folds): triangular filter i rises from point i to point
// i+1 (value 1 there) and falls to point i+2, built with Where over a
// [bins, 1] iota against [1, num_mel_bins] points.
std::vector<ValueId> mel_weight_rule(const Node& node, FissionBuilder& b) {
  int64_t mel_bins = constant_scalar(node, b, 0, "num_mel_bins");
  int64_t dft_length = constant_scalar(node, b, 1, "dft_length");
  int64_t bins = dft_length / 2 + 1;
  ValueId points = b.reshape(mel_points(node, b, mel_bins, dft_length), {1, mel_bins + 2});
  ValueId lo = b.slice(points, {0}, {mel_bins}, {1});
  ValueId center = b.slice(points, {1}, {mel_bins + 1}, {1});
  ValueId hi = b.slice(points, {2}, {mel_bins + 2}, {1});
  Tensor rows(DType::Float64, {bins, 1});
  for (int64_t j = 0; j < bins; ++j) rows.set_f64(j, double(j));
  ValueId j = b.constant(rows);
  auto where = [&](ValueId c, ValueId x, ValueId y) { return b.add1("Where", {c, x, y}); };
  auto both = [&](ValueId x, ValueId y) { return b.binary("And", x, y); };
  ValueId rising = b.binary("Div", b.binary("Sub", j, lo), b.binary("Sub", center, lo));
  ValueId falling = b.binary("Div", b.binary("Sub", hi, j), b.binary("Sub", hi, center));
  ValueId zero = b.scalar(0, DType::Float64);
  ValueId out = where(both(b.binary("Less", center, j), b.binary("Less", j, hi)), falling, zero);
  out = where(both(b.binary("LessOrEqual", lo, j), b.binary("Less", j, center)), rising, out);
  out = where(b.binary("Equal", j, center), b.scalar(1, DType::Float64), out);
  DType dtype;
  if (!dtype_from_onnx(int(node.attrs.get_int("output_datatype", 1)), &dtype)) {
    throw Error(node.describe() + ": unsupported output_datatype");
  }
  return {b.cast(out, dtype)};
}

}  // namespace

void add_signal_rules(FissionRuleTable& table) {
  table.add("DFT", dft_rule);
  table.add("STFT", stft_rule);
  table.add("EyeLike", eye_like_rule);
  table.add("MelWeightMatrix", mel_weight_rule);
}

}  // namespace orchid::fission
