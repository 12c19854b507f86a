// Recurrent layers: RNN, GRU, LSTM (opset 14 semantics; earlier opsets are the
// same without the `layout` attribute, whose default 0 they get).
//
// Inputs X [seq, batch, input] (layout 1: [batch, seq, input]), W [dirs,
// G*hidden, input], R [dirs, G*hidden, hidden], B? [dirs, 2*G*hidden] (W's
// biases then R's), sequence_lens? [batch], initial_h? [dirs, batch, hidden]
// (layout 1: [batch, dirs, hidden]), LSTM also initial_c? (like initial_h)
// and P? [dirs, 3*hidden] (peepholes i, o, f). Gate order within W/R/B:
// RNN i; GRU z, r, h; LSTM i, o, f, c.
// Outputs Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs,
// hidden]), Y_h [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]) and,
// for LSTM, Y_c like Y_h.
//
// Per batch entry with sequence length L (sequence_lens, default seq), steps
// t >= L are skipped: their Y is 0 and the state is unchanged, so Y_h is the
// state after the last processed step (t = L-1 forward, t = 0 reverse).
// `clip`, when present, clamps every gate's pre-activation to [-clip, clip].
// `activations` (case-insensitive names) lists f (RNN), f, g (GRU) or f, g, h
// (LSTM) per direction, forward first; `activation_alpha`/`activation_beta`
// are consumed in order by the activations that take them (ONNX defaults
// when the lists run out).
#include <algorithm>
#include <cctype>
#include <cmath>

#include "reference/ops/extra_utils.h"
#include "reference/ops/op_utils.h"
#include "reference/ops/ops.h"
#include "reference/ops/recurrent_attrs.h"

namespace orchid::reference {
namespace {

using extra::f64;

using Cell = RecurrentCell;
using Config = RecurrentConfig;

int64_t num_gates(Cell cell) { return recurrent_num_gates(cell); }

Config parse_config(const Attributes& attrs, Cell cell, const TensorType& r_type) {
  return parse_recurrent_config(attrs, cell, r_type.rank() == 3 ? r_type.shape[2] : 0);
}

std::vector<TensorType> infer_recurrent(const InferContext& ctx, Cell cell) {
  const TensorType& x = ctx.input(0);
  const TensorType& r = ctx.input(2);
  require_dtype(x.dtype, TypeClass::Float, 0, "X");
  Config cfg = parse_config(ctx.attrs(), cell, r);
  extra::require_rank(x, 3, 0, "X");
  int64_t seq = cfg.layout == 0 ? x.shape[0] : x.shape[1];
  int64_t batch = cfg.layout == 0 ? x.shape[1] : x.shape[0];
  int64_t input_size = x.shape[2];
  int64_t gh = num_gates(cell) * cfg.hidden;
  auto check = [&](size_t i, const char* name, const Shape& expected) {
    if (!ctx.has_input(i)) return;
    const TensorType& t = ctx.input(i);
    if (t.dtype != x.dtype) {
      ORCHID_FAIL() << "input " << i << " (" << name << ") must have the dtype of X, " << dtype_name(x.dtype)
                    << ", got " << dtype_name(t.dtype);
    }
    if (t.shape != expected) {
      ORCHID_FAIL() << "input " << i << " (" << name << ") must have shape " << shape_to_string(expected) << ", got "
                    << shape_to_string(t.shape);
    }
  };
  Shape state = cfg.layout == 0 ? Shape{cfg.dirs, batch, cfg.hidden} : Shape{batch, cfg.dirs, cfg.hidden};
  check(1, "W", {cfg.dirs, gh, input_size});
  check(2, "R", {cfg.dirs, gh, cfg.hidden});
  check(3, "B", {cfg.dirs, 2 * gh});
  if (ctx.has_input(4)) {
    const TensorType& lens = ctx.input(4);
    if (lens.dtype != DType::Int32 && lens.dtype != DType::Int64) {
      ORCHID_FAIL() << "expected an int32 tensor for input 4 (sequence_lens), got " << dtype_name(lens.dtype);
    }
    if (lens.shape != Shape{batch}) {
      ORCHID_FAIL() << "input 4 (sequence_lens) must have shape [" << batch << "], got " << shape_to_string(lens.shape);
    }
  }
  check(5, "initial_h", state);
  if (cell == Cell::Lstm) {
    check(6, "initial_c", state);
    check(7, "P", {cfg.dirs, 3 * cfg.hidden});
  }
  Shape y = cfg.layout == 0 ? Shape{seq, cfg.dirs, batch, cfg.hidden} : Shape{batch, seq, cfg.dirs, cfg.hidden};
  std::vector<TensorType> outs{{x.dtype, y}, {x.dtype, state}};
  if (cell == Cell::Lstm) outs.push_back({x.dtype, state});
  return outs;
}

std::vector<Tensor> eval_recurrent(const EvalContext& ctx, Cell cell) {
  const Tensor& xt = ctx.input(0);
  Config cfg = parse_config(ctx.attrs(), cell, ctx.input(2).type());
  const int64_t H = cfg.hidden, G = num_gates(cell), GH = G * H;
  const int64_t seq = cfg.layout == 0 ? xt.dim(0) : xt.dim(1);
  const int64_t batch = cfg.layout == 0 ? xt.dim(1) : xt.dim(0);
  const int64_t I = xt.dim(2);
  std::vector<double> x = f64(xt), w = f64(ctx.input(1)), r = f64(ctx.input(2));
  std::vector<double> bias = ctx.has_input(3) ? f64(ctx.input(3)) : std::vector<double>(size_t(cfg.dirs * 2 * GH), 0.0);
  std::vector<double> peep = (cell == Cell::Lstm && ctx.has_input(7)) ? f64(ctx.input(7))
                                                                        : std::vector<double>(size_t(cfg.dirs * 3 * H), 0.0);
  std::vector<int64_t> lens(size_t(batch), seq);
  if (ctx.has_input(4)) {
    for (int64_t b = 0; b < batch; ++b) {
      lens[size_t(b)] = ctx.input(4).at_i64(b);
      if (lens[size_t(b)] < 0 || lens[size_t(b)] > seq) {
        ORCHID_FAIL() << "sequence_lens[" << b << "] = " << lens[size_t(b)] << " is out of range [0, " << seq << "]";
      }
    }
  }
  // Index helpers for the layout-dependent tensors.
  auto x_at = [&](int64_t t, int64_t b, int64_t i) {
    return x[size_t((cfg.layout == 0 ? (t * batch + b) : (b * seq + t)) * I + i)];
  };
  auto state_index = [&](int64_t d, int64_t b, int64_t j) {
    return size_t((cfg.layout == 0 ? (d * batch + b) : (b * cfg.dirs + d)) * H + j);
  };
  auto y_index = [&](int64_t t, int64_t d, int64_t b, int64_t j) {
    return size_t((cfg.layout == 0 ? ((t * cfg.dirs + d) * batch + b) : ((b * seq + t) * cfg.dirs + d)) * H + j);
  };
  std::vector<double> init_h = ctx.has_input(5) ? f64(ctx.input(5)) : std::vector<double>(size_t(cfg.dirs * batch * H), 0.0);
  std::vector<double> init_c =
      (cell == Cell::Lstm && ctx.has_input(6)) ? f64(ctx.input(6)) : std::vector<double>(init_h.size(), 0.0);

  std::vector<double> y(size_t(shape_numel(ctx.output_types[0].shape)), 0.0);
  std::vector<double> y_h(init_h.size()), y_c(init_h.size());
  auto clip = [&](double v) { return cfg.has_clip ? std::clamp(v, -cfg.clip, cfg.clip) : v; };

  for (int64_t d = 0; d < cfg.dirs; ++d) {
    bool reverse = cfg.reverse_only || d == 1;
    const double* W = &w[size_t(d * GH * I)];
    const double* R = &r[size_t(d * GH * H)];
    const double* Wb = &bias[size_t(d * 2 * GH)];
    const double* Rb = Wb + GH;
    const double* P = &peep[size_t(d * 3 * H)];
    const auto& act = cfg.activations[size_t(d)];
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<double> h(static_cast<size_t>(H)), c(static_cast<size_t>(H));
      for (int64_t j = 0; j < H; ++j) {
        h[size_t(j)] = init_h[state_index(d, b, j)];
        c[size_t(j)] = init_c[state_index(d, b, j)];
      }
      std::vector<double> xw(static_cast<size_t>(GH)), hr(static_cast<size_t>(GH));
      for (int64_t s = 0; s < seq; ++s) {
        int64_t t = reverse ? seq - 1 - s : s;
        if (t >= lens[size_t(b)]) continue;
        // xw = W x_t + Wb and hr = R h + Rb, all gates.
        for (int64_t g = 0; g < GH; ++g) {
          double a = Wb[g], e = Rb[g];
          for (int64_t i = 0; i < I; ++i) a += W[g * I + i] * x_at(t, b, i);
          for (int64_t k = 0; k < H; ++k) e += R[g * H + k] * h[size_t(k)];
          xw[size_t(g)] = a;
          hr[size_t(g)] = e;
        }
        std::vector<double> next(static_cast<size_t>(H));
        if (cell == Cell::Rnn) {
          for (int64_t j = 0; j < H; ++j) next[size_t(j)] = act[0](clip(xw[size_t(j)] + hr[size_t(j)]));
        } else if (cell == Cell::Gru) {
          std::vector<double> z(static_cast<size_t>(H)), rg(static_cast<size_t>(H));
          for (int64_t j = 0; j < H; ++j) {
            z[size_t(j)] = act[0](clip(xw[size_t(j)] + hr[size_t(j)]));
            rg[size_t(j)] = act[0](clip(xw[size_t(H + j)] + hr[size_t(H + j)]));
          }
          for (int64_t j = 0; j < H; ++j) {
            double pre;
            if (cfg.linear_before_reset) {
              pre = xw[size_t(2 * H + j)] + rg[size_t(j)] * hr[size_t(2 * H + j)];
            } else {
              double e = Rb[2 * H + j];
              for (int64_t k = 0; k < H; ++k) e += R[(2 * H + j) * H + k] * rg[size_t(k)] * h[size_t(k)];
              pre = xw[size_t(2 * H + j)] + e;
            }
            double hh = act[1](clip(pre));
            next[size_t(j)] = (1 - z[size_t(j)]) * hh + z[size_t(j)] * h[size_t(j)];
          }
        } else {
          for (int64_t j = 0; j < H; ++j) {
            auto pre = [&](int64_t gate) { return xw[size_t(gate * H + j)] + hr[size_t(gate * H + j)]; };
            double f = act[0](clip(pre(2) + P[2 * H + j] * c[size_t(j)]));
            double i = cfg.input_forget ? 1 - f : act[0](clip(pre(0) + P[j] * c[size_t(j)]));
            double cc = act[1](clip(pre(3)));
            double cn = f * c[size_t(j)] + i * cc;
            double o = act[0](clip(pre(1) + P[H + j] * cn));
            c[size_t(j)] = cn;
            next[size_t(j)] = o * act[2](cn);
          }
        }
        h = next;
        for (int64_t j = 0; j < H; ++j) y[y_index(t, d, b, j)] = h[size_t(j)];
      }
      for (int64_t j = 0; j < H; ++j) {
        y_h[state_index(d, b, j)] = h[size_t(j)];
        y_c[state_index(d, b, j)] = c[size_t(j)];
      }
    }
  }
  std::vector<Tensor> outs{extra::make_tensor(ctx.output_types[0], y), extra::make_tensor(ctx.output_types[1], y_h)};
  if (cell == Cell::Lstm) outs.push_back(extra::make_tensor(ctx.output_types[2], y_c));
  return outs;
}

OpSchema recurrent_schema(const char* op, Cell cell) {
  OpSchema s;
  s.op = op;
  s.min_inputs = 3;
  s.max_inputs = cell == Cell::Lstm ? 8 : 6;
  s.infer = [cell](const InferContext& ctx) { return infer_recurrent(ctx, cell); };
  s.eval = [cell](const EvalContext& ctx) { return eval_recurrent(ctx, cell); };
  return s;
}

}  // namespace

void register_recurrent_ops(OpRegistry& registry) {
  registry.add(recurrent_schema("RNN", Cell::Rnn));
  registry.add(recurrent_schema("GRU", Cell::Gru));
  registry.add(recurrent_schema("LSTM", Cell::Lstm));
}

}  // namespace orchid::reference
