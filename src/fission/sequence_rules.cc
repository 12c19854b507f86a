// Fission of the recurrent layers RNN, GRU and LSTM (semantics:
// src/reference/ops/recurrent.cc) by unrolling over the static sequence.
//
// Per direction, the input projection of every step is one MatMul
// X [seq, batch, I] x W^T [I, G*H] plus the foldable biases; each step then
// takes its row with a constant-index Gather, adds h R^T (a MatMul with the
// transposed recurrence weights, constants folded at fission time), and
// applies the gates (Slices of the fused gate tensor), clip (Min/Max) and the
// activation functions as elementwise primitives. sequence_lens masks the
// steps past each entry's length with Where: the state is kept and Y is 0
// there, exactly as the reference skips them.
#include <algorithm>
#include <cctype>

#include "fission/rules.h"
#include "reference/ops/recurrent_attrs.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using Cell = reference::RecurrentCell;
using Config = reference::RecurrentConfig;
using Activation = reference::RecurrentActivation;

int64_t num_gates(Cell cell) { return reference::recurrent_num_gates(cell); }

Config parse_config(const Node& node, Cell cell, const Shape& r_shape) {
  return reference::parse_recurrent_config(node.attrs, cell, r_shape.size() == 3 ? r_shape[2] : 0);
}

// ---- Elementwise building blocks ----------------------------------------------

struct Ops {
  FissionBuilder& b;
  DType dtype;

  ValueId k(double v) const { return b.scalar(v, dtype); }
  ValueId add(ValueId x, ValueId y) const { return b.binary("Add", x, y); }
  ValueId sub(ValueId x, ValueId y) const { return b.binary("Sub", x, y); }
  ValueId mul(ValueId x, ValueId y) const { return b.binary("Mul", x, y); }
  ValueId where(ValueId c, ValueId x, ValueId y) const { return b.add1("Where", {c, x, y}); }
};

// log(1 + e) for e >= 0, accurate also when 1 + e rounds to 1 (the classic
// u = 1 + e; log(u) * e / (u - 1) correction).
ValueId log1p(const Ops& o, ValueId e) {
  ValueId u = o.add(o.k(1), e);
  ValueId u_minus_1 = o.sub(u, o.k(1));
  ValueId corrected = o.b.binary("Div", o.mul(o.b.unary("Log", u), e), u_minus_1);
  return o.where(o.b.binary("Equal", u, o.k(1)), e, corrected);
}

ValueId apply_activation(const Ops& o, const Activation& act, ValueId x) {
  FissionBuilder& b = o.b;
  const std::string& n = act.name;
  if (n == "sigmoid") return b.unary("Sigmoid", x);
  if (n == "tanh") return b.unary("Tanh", x);
  if (n == "relu") return b.unary("Relu", x);
  if (n == "affine") return o.add(o.mul(x, o.k(act.alpha)), o.k(act.beta));
  if (n == "leakyrelu") return o.where(b.binary("GreaterOrEqual", x, o.k(0)), x, o.mul(x, o.k(act.alpha)));
  if (n == "thresholdedrelu") return o.where(b.binary("Greater", x, o.k(act.alpha)), x, o.k(0));
  if (n == "scaledtanh") return o.mul(o.k(act.alpha), b.unary("Tanh", o.mul(x, o.k(act.beta))));
  if (n == "hardsigmoid") {
    ValueId affine = o.add(o.mul(x, o.k(act.alpha)), o.k(act.beta));
    return b.binary("Min", b.binary("Max", affine, o.k(0)), o.k(1));
  }
  if (n == "elu") {
    ValueId negative = o.mul(o.k(act.alpha), o.sub(b.unary("Exp", x), o.k(1)));
    return o.where(b.binary("GreaterOrEqual", x, o.k(0)), x, negative);
  }
  if (n == "softsign") return b.binary("Div", x, o.add(o.k(1), b.unary("Abs", x)));
  // softplus, overflow-free: log1p(exp(-|x|)) + max(x, 0).
  ORCHID_CHECK(n == "softplus") << "unchecked activation " << n;
  return o.add(log1p(o, b.unary("Exp", b.unary("Neg", b.unary("Abs", x)))), b.unary("Relu", x));
}

// ---- Per-direction weights ---------------------------------------------------

ValueId optional_input(const Node& node, size_t i) { return i < node.inputs.size() ? node.inputs[i] : kNoValue; }

// x[index] along `axis`, dropping the axis (a constant-index Gather).
ValueId take(FissionBuilder& b, ValueId x, int64_t index, int64_t axis) {
  Attributes attrs;
  attrs.set("axis", axis);
  return b.add1("Gather", {x, b.constant(Tensor::scalar_i64(index))}, attrs);
}

struct DirectionWeights {
  ValueId xw;         // X W^T + folded biases: [seq, batch, G*H] (layout 1: [batch, seq, G*H])
  ValueId r_t;        // R^T [H, G*H]; for GRU without linear_before_reset only the z, r gates [H, 2H]
  ValueId r_h_t;      // GRU without linear_before_reset: R_h^T [H, H]
  ValueId rb_h;       // GRU with linear_before_reset: the h gate's recurrence bias [H]
  ValueId peephole;   // LSTM: P [3H] (i, o, f), or kNoValue
  ValueId h0, c0;     // [batch, H]
};

// The recurrence biases that add unconditionally are folded into the input
// projection; GRU's h-gate recurrence bias with linear_before_reset is scaled
// by the reset gate and so stays apart.
ValueId input_bias(const Node& node, const Config& cfg, FissionBuilder& b, int64_t d, DirectionWeights& w) {
  ValueId bias = optional_input(node, 3);
  if (bias == kNoValue) return kNoValue;
  int64_t gh = num_gates(cfg.cell) * cfg.hidden, h = cfg.hidden;
  ValueId bd = take(b, bias, d, 0);
  ValueId wb = b.slice(bd, {0}, {gh}, {0});
  ValueId rb = b.slice(bd, {gh}, {2 * gh}, {0});
  if (cfg.cell == Cell::Gru && cfg.linear_before_reset) {
    w.rb_h = b.slice(rb, {2 * h}, {3 * h}, {0});
    ValueId zeros = b.constant(Tensor(b.dtype(bias), {h}));
    rb = b.concat({b.slice(rb, {0}, {2 * h}, {0}), zeros}, 0);
  }
  return b.binary("Add", wb, rb);
}

// The initial state of direction d as [batch, H] (zeros when omitted).
ValueId initial_state(const Node& node, size_t input, const Config& cfg, FissionBuilder& b, int64_t d,
                      int64_t batch) {
  ValueId init = optional_input(node, input);
  if (init == kNoValue) return b.constant(Tensor(b.dtype(node.inputs[0]), {batch, cfg.hidden}));
  return take(b, init, d, cfg.layout == 0 ? 0 : 1);
}

DirectionWeights direction_weights(const Node& node, const Config& cfg, FissionBuilder& b, int64_t d, int64_t batch) {
  DirectionWeights w{kNoValue, kNoValue, kNoValue, kNoValue, kNoValue, kNoValue, kNoValue};
  int64_t h = cfg.hidden;
  ValueId w_t = b.transpose(take(b, node.inputs[1], d, 0), {1, 0});  // [I, G*H]
  w.xw = b.binary("MatMul", node.inputs[0], w_t);
  ValueId bias = input_bias(node, cfg, b, d, w);
  if (bias != kNoValue) w.xw = b.binary("Add", w.xw, bias);
  ValueId r_t = b.transpose(take(b, node.inputs[2], d, 0), {1, 0});  // [H, G*H]
  w.r_t = r_t;
  if (cfg.cell == Cell::Gru && !cfg.linear_before_reset) {
    w.r_t = b.slice(r_t, {0}, {2 * h}, {1});
    w.r_h_t = b.slice(r_t, {2 * h}, {3 * h}, {1});
  }
  if (cfg.cell == Cell::Lstm && optional_input(node, 7) != kNoValue) w.peephole = take(b, node.inputs[7], d, 0);
  w.h0 = initial_state(node, 5, cfg, b, d, batch);
  if (cfg.cell == Cell::Lstm) w.c0 = initial_state(node, 6, cfg, b, d, batch);
  return w;
}

// ---- One time step -------------------------------------------------------------

struct State {
  ValueId h, c;
};

struct Step {
  const Config& cfg;
  const Ops& o;
  const DirectionWeights& w;
  const std::vector<Activation>& act;

  ValueId gate(ValueId fused, int64_t g) const {
    return o.b.slice(fused, {g * cfg.hidden}, {(g + 1) * cfg.hidden}, {1});
  }
  ValueId clip(ValueId x) const {
    if (!cfg.has_clip) return x;
    return o.b.binary("Max", o.b.binary("Min", x, o.k(cfg.clip)), o.k(-cfg.clip));
  }
  ValueId f(size_t i, ValueId pre) const { return apply_activation(o, act[i], clip(pre)); }

  State rnn(ValueId xw, State s) const {
    ValueId pre = o.add(xw, o.b.binary("MatMul", s.h, w.r_t));
    return {f(0, pre), kNoValue};
  }

  State gru(ValueId xw, State s) const {
    ValueId hr = o.b.binary("MatMul", s.h, w.r_t);
    ValueId z = f(0, o.add(gate(xw, 0), gate(hr, 0)));
    ValueId r = f(0, o.add(gate(xw, 1), gate(hr, 1)));
    ValueId recur;
    if (cfg.linear_before_reset) {
      ValueId hr_h = gate(hr, 2);
      if (w.rb_h != kNoValue) hr_h = o.add(hr_h, w.rb_h);
      recur = o.mul(r, hr_h);
    } else {
      recur = o.b.binary("MatMul", o.mul(r, s.h), w.r_h_t);
    }
    ValueId hh = f(1, o.add(gate(xw, 2), recur));
    // (1 - z) * hh + z * h
    ValueId next = o.add(o.mul(o.sub(o.k(1), z), hh), o.mul(z, s.h));
    return {next, kNoValue};
  }

  ValueId peep(ValueId pre, int64_t g, ValueId c) const {
    if (w.peephole == kNoValue) return pre;
    ValueId p = o.b.slice(w.peephole, {g * cfg.hidden}, {(g + 1) * cfg.hidden}, {0});
    return o.add(pre, o.mul(p, c));
  }

  // Gates i, o, f, c; peepholes i, o, f.
  State lstm(ValueId xw, State s) const {
    ValueId pre = o.add(xw, o.b.binary("MatMul", s.h, w.r_t));
    ValueId fg = f(0, peep(gate(pre, 2), 2, s.c));
    ValueId ig = cfg.input_forget ? o.sub(o.k(1), fg) : f(0, peep(gate(pre, 0), 0, s.c));
    ValueId cc = f(1, gate(pre, 3));
    ValueId cn = o.add(o.mul(fg, s.c), o.mul(ig, cc));
    ValueId og = f(0, peep(gate(pre, 1), 1, cn));
    return {o.mul(og, apply_activation(o, act[2], cn)), cn};
  }

  State next(ValueId xw, State s) const {
    return cfg.cell == Cell::Rnn ? rnn(xw, s) : cfg.cell == Cell::Gru ? gru(xw, s) : lstm(xw, s);
  }
};

// ---- The unrolled layer ----------------------------------------------------------

// Which batch entries process step t: [batch, 1] bool, or kNoValue for all.
ValueId step_mask(const Node& node, FissionBuilder& b, int64_t t) {
  ValueId lens = optional_input(node, 4);
  if (lens == kNoValue) return kNoValue;
  if (const Tensor* value = b.constant_value(lens)) {
    bool all = true;
    for (int64_t i = 0; i < value->numel(); ++i) all &= value->at_i64(i) > t;
    if (all) return kNoValue;
  }
  ValueId valid = b.binary("Less", b.scalar(double(t), b.dtype(lens)), lens);
  return b.reshape(valid, {b.shape(lens)[0], 1});
}

struct DirectionResult {
  std::vector<ValueId> y;  // per time index t: [batch, H]
  State last;
};

DirectionResult run_direction(const Node& node, const Config& cfg, FissionBuilder& b, int64_t d, int64_t seq,
                              int64_t batch) {
  Ops o{b, b.dtype(node.inputs[0])};
  DirectionWeights w = direction_weights(node, cfg, b, d, batch);
  Step step{cfg, o, w, cfg.activations[size_t(d)]};
  bool reverse = cfg.reverse_only || d == 1;
  DirectionResult result{std::vector<ValueId>(size_t(seq), kNoValue), State{w.h0, w.c0}};
  State& s = result.last;
  for (int64_t i = 0; i < seq; ++i) {
    int64_t t = reverse ? seq - 1 - i : i;
    State n = step.next(take(b, w.xw, t, cfg.layout == 0 ? 0 : 1), s);
    ValueId mask = step_mask(node, b, t);
    if (mask == kNoValue) {
      result.y[size_t(t)] = n.h;
      s = n;
      continue;
    }
    // Steps past an entry's length leave its state alone and output 0.
    result.y[size_t(t)] = o.where(mask, n.h, o.k(0));
    s.h = o.where(mask, n.h, s.h);
    if (cfg.cell == Cell::Lstm) s.c = o.where(mask, n.c, s.c);
  }
  return result;
}

// Stacks [batch, H] states into [dirs, batch, H] (layout 1: [batch, dirs, H]).
ValueId stack_states(FissionBuilder& b, const Config& cfg, const std::vector<ValueId>& states) {
  std::vector<ValueId> parts;
  for (ValueId s : states) {
    Shape shape = b.shape(s);
    shape.insert(shape.begin() + (cfg.layout == 0 ? 0 : 1), 1);
    parts.push_back(b.reshape(s, shape));
  }
  return b.concat(parts, cfg.layout == 0 ? 0 : 1);
}

// Y [seq, dirs, batch, H] (layout 1: [batch, seq, dirs, H]).
ValueId stack_outputs(FissionBuilder& b, const Config& cfg, const std::vector<DirectionResult>& dirs) {
  int64_t seq_axis = cfg.layout == 0 ? 0 : 1, dir_axis = cfg.layout == 0 ? 1 : 2;
  std::vector<ValueId> per_dir;
  for (const DirectionResult& r : dirs) {
    std::vector<ValueId> steps;
    for (ValueId y : r.y) {
      Shape shape = b.shape(y);  // [batch, H]
      shape.insert(shape.begin() + (cfg.layout == 0 ? 0 : 1), {1, 1});
      steps.push_back(b.reshape(y, shape));
    }
    per_dir.push_back(b.concat(steps, seq_axis));
  }
  return b.concat(per_dir, dir_axis);
}

std::vector<ValueId> recurrent_rule(const Node& node, FissionBuilder& b, Cell cell) {
  Config cfg = parse_config(node, cell, b.shape(node.inputs[2]));
  const Shape& x = b.shape(node.inputs[0]);
  int64_t seq = cfg.layout == 0 ? x[0] : x[1];
  int64_t batch = cfg.layout == 0 ? x[1] : x[0];
  std::vector<DirectionResult> dirs;
  for (int64_t d = 0; d < cfg.dirs; ++d) dirs.push_back(run_direction(node, cfg, b, d, seq, batch));
  auto used = [&](size_t i) { return i < node.outputs.size() && node.outputs[i] != kNoValue; };
  std::vector<ValueId> out(node.outputs.size(), kNoValue);
  if (used(0)) out[0] = stack_outputs(b, cfg, dirs);
  std::vector<ValueId> hs, cs;
  for (const DirectionResult& r : dirs) {
    hs.push_back(r.last.h);
    cs.push_back(r.last.c);
  }
  if (used(1)) out[1] = stack_states(b, cfg, hs);
  if (used(2)) out[2] = stack_states(b, cfg, cs);
  return out;
}

}  // namespace

void add_sequence_rules(FissionRuleTable& table) {
  table.add("RNN", [](const Node& node, FissionBuilder& b) { return recurrent_rule(node, b, Cell::Rnn); });
  table.add("GRU", [](const Node& node, FissionBuilder& b) { return recurrent_rule(node, b, Cell::Gru); });
  table.add("LSTM", [](const Node& node, FissionBuilder& b) { return recurrent_rule(node, b, Cell::Lstm); });
}

}  // namespace orchid::fission
