// Lowering of one KernelGroup to the kernel IR (codegen/kernel_ir), with the
// CPU's schedules. Split by concern:
//  - lower_expr.cc: a value's scalar expression at an index (inlining
//    elementwise functions and layout index maps, loads of buffers, CSE);
//  - lower_layout.cc: layout primitives as index maps;
//  - lower_schedule.cc: the kernel itself, one loop nest (stage) per
//    materialized value, reductions as inner loops, and the schedule choices
//    (inner split, affine runs, chunks, tiles, parallel regions).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/kernel_ir/kernel_ir.h"
#include "ir/graph.h"
#include "runtime/kernel.h"

namespace orchid::codegen::cpu::detail {

using kir::Expr;

// An element index into a value of a known shape: per-dimension indices, the
// row-major linear index, or both. The missing form is derived on demand, so
// that a chain of Reshapes and same-shape elementwise nodes keeps the linear
// index and never divides.
struct Index {
  std::vector<Expr> dims;  // empty when unknown (or rank 0)
  Expr linear;             // null when unknown
  bool has_dims = false;
  // With has_dims, the dimensions from lazy_split on (null) are still to be
  // derived from lazy_from, the stage's merged inner index, when a read
  // needs them.
  Expr lazy_from;
  size_t lazy_split = 0;
};

// Transcendental functions: worth computing once, not inlined at every read.
bool is_expensive(const std::string& op);

// Layout primitives (index maps): Transpose, Reshape, Slice, Pad, Expand,
// Concat, Gather (emitter.cc).
bool is_layout(const std::string& op);

// A Transpose's permutation: its `perm`, normalized, or the reversed axes.
std::vector<int64_t> transpose_perm(const Node& node, size_t rank);

// The IR type of a value of `dtype` (float or bool data).
kir::Type data_type(DType dtype);

class Lowering {
 public:
  Lowering(const Graph& graph, const runtime::KernelGroup& group);
  kir::Kernel lower();

 private:
  // ---- lower_expr.cc
  // `value` at `index`: a load, a literal, or its producer inlined.
  Expr value_at(ValueId value, Index index);
  // The same for a value computed by its producer node (not loaded).
  Expr compute(ValueId value, Index index);
  Expr compute_elementwise(const Node& node, ValueId value, Index& index);
  // The node of the group that computes `value` by `op`, when it is inlined.
  const Node* producer_in_group(ValueId value, const std::string& op) const;
  // x when `value` is fission's softplus of x (then tanh of it is one
  // function of x: fast_math::tanh_softplus, Mish's factor).
  std::optional<ValueId> softplus_argument(ValueId value) const;
  // The node of the whole graph that computes `value`, if any.
  const Node* graph_producer(ValueId value) const;
  // Whether `value` is x - ReduceMax(x) (kept dimensions): a softmax's
  // shifted input, never above 0, whose Exp needs no overflow handling.
  bool is_less_row_max(ValueId value) const;
  // ---- lower_layout.cc
  Index reshape_index(const Shape& in, const Shape& out, Index& index);
  Expr compute_layout(const Node& node, ValueId value, Index& index);
  Expr inline_transpose(const Node& node, const std::vector<Expr>& dims);
  Expr inline_slice(const Node& node, const std::vector<Expr>& dims);
  Expr inline_pad(const Node& node, ValueId value, const std::vector<Expr>& dims);
  Expr inline_concat(const Node& node, ValueId value, const std::vector<Expr>& dims);
  Expr inline_gather(const Node& node, ValueId value, const std::vector<Expr>& dims);
  // table[at] as an index expression: a literal at a literal, `at + offset`
  // inside an inner-loop run where the table is affine, else a load.
  Expr table_index(const std::string& table, const Expr& at);
  // The table of outer[inner[k]], declared once.
  std::string composed_table(const std::string& outer, const std::string& inner);
  std::string declare_table(const std::vector<int64_t>& values);
  // The index into `input` (of its own shape) that broadcasts to `index` of
  // a value of shape `out`.
  Index broadcast_index(ValueId input, const Shape& out, Index& index);
  const Expr& linear_of(const Shape& shape, Index& index);
  const std::vector<Expr>& dims_of(const Shape& shape, Index& index);
  const Expr& dim_of(const Shape& shape, Index& index, size_t d);
  // A `let` of `expr` in the current block, or the existing one of the same
  // expression (common subexpressions of one loop body); names and literals
  // as they are.
  Expr let(kir::Type type, const Expr& expr);
  std::string fresh(const std::string& prefix);

  // A load of a materialized value (or input) at `index`; notes whether a
  // read of a value of the open row nest stays in the current row.
  Expr load_buffer(ValueId value, Index& index);

  // ---- lower_schedule.cc
  void declare_buffers();
  void write_stage(ValueId value);
  void write_transpose_stage(const Node& node, ValueId value);
  // A stage's loop nest over `part` (the whole value, or one input's range
  // of a Concat), its outer loop over the dimensions before `split`.
  struct StagePart {
    ValueId source = kNoValue;  // computed at the part's index: the value, or the Concat input
    size_t axis = 0;            // Concat: where the part sits along axis
    int64_t begin = 0;
    bool concat = false;
  };
  // A range of the inner loop where every table read at the inner index is
  // affine: table[i] == i + offset (period 1: a pad's interior), or, with
  // i = period k + p, table[i] == k + offset[p] (an upsampling by `period`:
  // the loop runs over k, one copy of the body per phase p). Loads at affine
  // addresses (contiguous, vectorizable) instead of through the table.
  struct InnerRun {
    int64_t begin = 0, end = 0;  // in elements of the inner range
    int64_t period = 1;
    std::map<std::string, std::vector<int64_t>> offsets;  // table -> offset per phase
  };
  void write_stage_loops(const Node& node, ValueId value, const StagePart& part, size_t split,
                         const std::vector<InnerRun>& runs);
  // The runs of [0, inner) over which every table in inner_tables_ is
  // affine, with the smallest period that gives few, long ones; none if no
  // period does.
  std::vector<InnerRun> affine_runs(int64_t inner) const;
  std::vector<InnerRun> affine_runs(int64_t inner, int64_t period) const;
  // The transcendental values to compute chunk by chunk, in order: two or
  // more, each inlined only at the stage's own element (expensive_reads_).
  std::vector<ValueId> chunkable() const;
  // Rows shared by consecutive stages (compute at row): a stage whose rows
  // are those of the stage before, and that reads the values of that
  // nest's stages only in its own row, runs in the same row loop, right
  // after them: a softmax's or LayerNorm's passes over one row while it is
  // in cache, instead of each pass over the whole tensor.
  struct RowNest {
    bool open = false;
    size_t region = 0;  // its Region's place in the kernel's body
    Shape shape;       // its first stage's loop shape
    size_t split = 0;  // its first stage's: rows are shape[0, split)
    int64_t rows = 0;
    std::map<ValueId, size_t> members;  // value -> its own split
  };
  // Whether a stage of loop shape `shape`, rows over [0, split), has the
  // rows of the nest.
  bool same_rows(const Shape& shape, size_t split) const;
  // Whether `index` into `value`, a member of the nest, lies in the current
  // stage's row.
  bool in_row(ValueId value, const Index& index) const;
  // The stage just lowered (the last statement) into the nest's row loop
  // when it can join, else it opens a new nest (or none: `row_stage` false,
  // a tiled transpose).
  void join_row_nest(ValueId value, const Shape& shape, size_t split, bool row_stage = true);
  // A nest's stored values that only its own stages read (softmax's
  // exponentials) become per-row arrays of the row loop: no scratch buffer,
  // the row stays in L1.
  void contract_row_values();
  void write_reduction_body(const Node& node, ValueId value, Index& index, const std::string& buffer,
                            const Expr& store_at);
  // Statements go to the innermost open statement's body.
  void add(kir::Stmt stmt);
  void open(kir::Stmt stmt);
  void close();
  kir::Block& current() { return open_.back().body; }

  const Graph& graph_;
  const runtime::KernelGroup& group_;
  kir::Kernel kernel_;
  std::vector<kir::Stmt> open_;  // open statements, the kernel's body first
  std::vector<std::map<std::string, Expr>> scopes_;  // CSE per open statement
  std::map<ValueId, size_t> producer_;  // value -> node index, for nodes in the group
  mutable std::vector<size_t> graph_producers_;  // producer_nodes of the whole graph, once asked (graph_producer)
  std::map<ValueId, std::string> buffer_;  // inputs and materialized values: buffer name
  std::vector<ValueId> stages_;           // materialized values in topological order
  std::map<ValueId, std::string> tables_;  // Gather: constant index table name
  std::map<std::string, std::vector<int64_t>> table_values_;  // table name -> its indices
  std::map<std::pair<std::string, std::string>, std::string> composed_;  // (outer, inner) -> table
  std::map<std::string, std::pair<std::string, Expr>> table_reads_;  // local -> (table, at)
  std::string inner_var_;                 // the inner loop's index when it walks one dimension
  std::set<std::string> inner_tables_;    // tables read at inner_var_ in the stage being written
  std::map<std::string, int64_t> run_offsets_;  // inside an InnerRun: its offsets for the phase being lowered
  Expr run_base_;                               // ... and what they add to (i, or k for a period)
  int64_t run_begin_ = 0, run_end_ = 0;         // the run's range of the inner loop (period 1)
  // Where a Pad's inside begins or ends along the inner loop, noted while
  // lowering a stage: its runs (affine_runs) break there.
  std::set<int64_t> pad_breaks_;
  // Transcendental values inlined in the stage being written, in the order
  // they were completed, and whether each was read at the stage's own element.
  std::vector<std::pair<ValueId, bool>> expensive_reads_;
  Expr stage_linear_;                            // the current loop's element index
  std::vector<ValueId> chunked_;                 // chunked lowering: these values per chunk
  std::map<ValueId, std::string> chunk_buffers_;  // inside a chunk: value -> its array
  RowNest row_nest_;
  std::vector<RowNest> closed_nests_;  // every nest, for contract_row_values
  std::set<ValueId> escaped_;          // nest values read outside their nest
  std::set<ValueId> stage_reads_;      // the buffers the stage being lowered reads
  bool reads_in_row_ = true;        // the stage being lowered reads the nest's values in its row only
  std::vector<Expr> row_dims_;      // the stage being lowered: its row's outer indices
  Shape stage_shape_;               // ... its loop shape
  size_t stage_split_ = 0;          // ... and split
  int counter_ = 0;
  bool inner_divmod_ = false;  // the stage being written divides its inner index
};

}  // namespace orchid::codegen::cpu::detail
