// Every primitive as a tensor-algebra expression (OLLIE's form): the bridge
// from Korch's primitive graph to OLLIE's derivation.
//
// primitive_expr(node, graph) is a top-level scope computing the node's first
// output: its loop iterators i0, i1, ... range over the output shape [0, dim),
// its sum iterators are r0, r1, ..., and it reads one expr tensor per data
// input of the node.
//
// Input naming: the tensor for node input k is named "in<k>"
// (primitive_expr_input_name), whatever the graph value is called. Value names
// are arbitrary strings (they may collide after sanitizing, or be reserved
// words of the text form), positions never do. A value used twice (Mul(x, x))
// appears as two tensors, in0 and in1, bound to the same data;
// primitive_expr_bindings lists the pairs to bind. Shape-deciding constant
// inputs (Reshape's shape, Slice's starts, ...) are folded into the
// expression and are not tensors; constant data inputs (Conv weights, an Add
// operand) are tensors like any other and the caller binds their values.
//
// Forms, relying on the IR's unbounded zero padding (reads outside [0, dim)
// of an input, or outside a scope's loop box, are 0):
//  - elementwise: Func calls and float arithmetic; numpy broadcasting reads
//    index 0 of a size-1 input dimension. Max(a, b) = b + relu(a - b) and
//    Min(a, b) = a - relu(a - b) (exact in real arithmetic; in floating point
//    they may differ from max/min by one rounding, and inf - inf gives NaN).
//  - ReduceSum: sum iterators over the reduced dimensions. CumSum: a sum
//    iterator over the whole axis reading x[i - r] (negative reads are 0).
//  - Layout: index maps. Reshape goes through the row-major flat index with
//    floor div/mod; Concat is the sum of each input read at its offset (each
//    read is 0 outside that input's range, so exactly one term is live);
//    Pad and Conv read out of range at the padded borders, and declare that
//    padding on the input tensor (the materialization promise of expr.h).
//  - Conv: L<n, m, o...> Sum<c, taps...> X[n, g*C/G + c, o*s + t*d - p] * W[m, c, t],
//    plus bias through a nested scope. ConvTranspose sums over input
//    positions: W[.., o + p - i*s] (taps out of range read 0); with dilation
//    d > 1 the tap is (o + p - i*s) / d guarded by the 0/1 indicator
//    {L<q:0:1> 1.0}[(o + p - i*s) % d].
// Primitives without an exact form (no max/min/product reduction, no select,
// no comparison, data-dependent indices, Funcs the IR lacks, integer
// arithmetic) give nullopt and a reason.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/expr.h"
#include "ir/graph.h"

namespace orchid::fission {

// The expression of `node`'s first output; nullopt (and the reason in
// *why_not when given) when the primitive has no exact expression form.
// Malformed nodes (bad attributes) raise orchid::Error.
std::optional<expr::Expr> primitive_expr(const Node& node, const Graph& graph, std::string* why_not = nullptr);

// The name of the expr tensor standing for node input `input_index`: "in<k>".
std::string primitive_expr_input_name(size_t input_index);

// The tensors read by `e` (an expression made by primitive_expr for `node`),
// each with the graph value to bind to it, in first-appearance order.
std::vector<std::pair<std::string, ValueId>> primitive_expr_bindings(const Node& node, expr::Expr e);

// Internals shared by the primitive_expr*.cc files.
namespace primitive_expr_detail {

// What a form builder sees; a builder returns nullptr after fail().
struct ExprContext {
  const Node& node;
  const Graph& graph;
  std::string* why_not;

  bool has_input(size_t i) const;
  const TensorType& input_type(size_t i) const;
  const Tensor* input_constant(size_t i) const;  // nullptr unless a constant
  const TensorType& output_type() const;
  // The tensor "in<i>" with the input's shape and declared padding.
  expr::Expr input_tensor(size_t i, std::vector<int64_t> pads = {}) const;
  // Records `reason` and returns nullptr.
  expr::Expr fail(const std::string& reason) const;
  // nullptr after fail() unless the given inputs and the output are floats.
  bool require_float(const std::vector<size_t>& inputs) const;
};

using FormBuilder = expr::Expr (*)(const ExprContext& ctx);

// Loop iterators i0.. over [0, dim) for `shape`, and sum iterators r0...
std::vector<expr::IterRange> loop_ranges(const Shape& shape);
std::vector<expr::Expr> range_iters(const std::vector<expr::IterRange>& ranges);
expr::IterRange sum_range(size_t index, int64_t extent);
// source[indices], reading index 0 of every size-1 source dimension that is
// broadcast (numpy rules, shapes aligned at the right) to `out_shape`.
expr::Expr broadcast_access(expr::Expr source, const Shape& out_shape, const std::vector<expr::Expr>& out_index);
// A scope over `out_shape` whose body is body_of(loop iterators).
template <typename Fn>
expr::Expr elementwise_scope(const Shape& out_shape, Fn body_of) {
  std::vector<expr::IterRange> loops = loop_ranges(out_shape);
  return expr::scope(loops, {}, body_of(range_iters(loops)));
}

// Form builders by operator, one table per kind (primitive_expr_<kind>.cc).
const std::vector<std::pair<const char*, FormBuilder>>& layout_forms();
const std::vector<std::pair<const char*, FormBuilder>>& linear_forms();

}  // namespace primitive_expr_detail

}  // namespace orchid::fission
