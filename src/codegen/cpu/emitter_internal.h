// Internals of the CPU emitter (emitter.cc): KernelWriter turns one
// KernelGroup into one C++ function. Split by concern:
//  - emitter_expr.cc: a value's scalar expression at an index (inlining
//    elementwise functions and layout index maps, loads of buffers, CSE);
//  - emitter_layout.cc: layout primitives as index maps;
//  - emitter_schedule.cc: the function itself, one loop nest (stage) per
//    materialized value, reductions as inner loops.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/kernel.h"

namespace orchid::codegen::cpu::detail {

// An element index into a value of a known shape, as C++ integer
// expressions: per-dimension indices, the row-major linear index, or both.
// The missing form is derived on demand, so that a chain of Reshapes and
// same-shape elementwise nodes keeps the linear index and never divides.
struct Index {
  std::vector<std::string> dims;  // empty when unknown (or rank 0)
  std::string linear;             // empty when unknown
  bool has_dims = false;
  // With has_dims, the dimensions from lazy_split on (empty strings) are
  // still to be derived from lazy_from, the stage's merged inner index, when
  // a read needs them.
  std::string lazy_from;
  size_t lazy_split = 0;
};

// Transcendental functions: worth computing once, not inlined at every read.
bool is_expensive(const std::string& op);

// A Transpose's permutation: its `perm`, normalized, or the reversed axes.
std::vector<int64_t> transpose_perm(const Node& node, size_t rank);

// Whether `s` is an integer literal (and its value).
bool is_int_literal(const std::string& s, int64_t* value = nullptr);

// Index arithmetic on expression strings, folding integer literals so the
// common cases (start 0, step 1, stride 1) emit nothing.
std::string index_add(const std::string& a, int64_t c);
std::string index_mul(const std::string& a, int64_t c);
std::string index_sum(const std::string& a, const std::string& b);

// A C++ literal of a float (exact: hexadecimal, inf and NaN spelled out).
std::string float_literal(double value);
// The C++ type of a value of `dtype` ("float", "bool").
const char* c_type(DType dtype);

class KernelWriter {
 public:
  KernelWriter(const Graph& graph, const runtime::KernelGroup& group);
  std::string write(const std::string& symbol);

 private:
  // ---- emitter_expr.cc
  // A local (or literal) holding `value` at `index`.
  std::string value_at(ValueId value, Index index);
  // The same for a value computed by its producer node (not loaded).
  std::string compute(ValueId value, Index index);
  std::string compute_elementwise(const Node& node, ValueId value, Index& index);
  // ---- emitter_layout.cc
  std::string compute_layout(const Node& node, ValueId value, Index& index);
  std::string inline_transpose(const Node& node, const std::vector<std::string>& dims);
  std::string inline_slice(const Node& node, const std::vector<std::string>& dims);
  std::string inline_pad(const Node& node, ValueId value, const std::vector<std::string>& dims);
  std::string inline_concat(const Node& node, ValueId value, const std::vector<std::string>& dims);
  std::string inline_gather(const Node& node, ValueId value, const std::vector<std::string>& dims);
  // table[at] as an index expression: a literal at a literal, `at + offset`
  // inside an inner-loop run where the table is affine, else a load.
  std::string table_index(const std::string& table, const std::string& at);
  // The table of outer[inner[k]], declared once.
  std::string composed_table(const std::string& outer, const std::string& inner);
  std::string declare_table(const std::vector<int64_t>& values);
  // The index into `input` (of its own shape) that broadcasts to `index` of
  // a value of shape `out`.
  Index broadcast_index(ValueId input, const Shape& out, Index& index);
  const std::string& linear_of(const Shape& shape, Index& index);
  const std::vector<std::string>& dims_of(const Shape& shape, Index& index);
  const std::string& dim_of(const Shape& shape, Index& index, size_t d);
  // `const TYPE tN = expr;` in the current scope, or the existing local of
  // the same expression (common subexpressions of one loop body).
  std::string let(const std::string& type, const std::string& expr);
  std::string fresh(const std::string& prefix);
  // Whether `expr` names nothing that varies in the inner loop (variant_).
  bool invariant(const std::string& expr) const;

  // ---- emitter_schedule.cc
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
  // table[i] == i + offset: loads at affine addresses (contiguous,
  // vectorizable) instead of through the table.
  struct InnerRun {
    int64_t begin = 0, end = 0;
    std::map<std::string, int64_t> offsets;  // table -> offset
  };
  void write_stage_loops(const Node& node, ValueId value, const StagePart& part, size_t split,
                         const std::vector<InnerRun>& runs);
  // The runs of [0, inner) over which every table in inner_tables_ is affine.
  std::vector<InnerRun> affine_runs(int64_t inner) const;
  // The transcendental values to compute chunk by chunk, in order: two or
  // more, each inlined only at the stage's own element (expensive_reads_).
  std::vector<ValueId> chunkable() const;
  void write_reduction_body(const Node& node, ValueId value, Index& index, const std::string& store);
  void line(const std::string& text);
  void open(const std::string& header);
  void close();

  const Graph& graph_;
  const runtime::KernelGroup& group_;
  std::map<ValueId, size_t> producer_;  // value -> node index, for nodes in the group
  std::map<ValueId, std::string> buffer_;  // inputs and materialized values: pointer name
  std::vector<ValueId> stages_;           // materialized values in topological order
  std::vector<std::string> local_decls_;   // per stage: __restrict views of the buffers
  std::map<ValueId, std::string> tables_;  // Gather: constant index table name
  std::map<std::string, std::vector<int64_t>> table_values_;  // table name -> its indices
  std::map<std::pair<std::string, std::string>, std::string> composed_;  // (outer, inner) -> table
  std::map<std::string, std::pair<std::string, std::string>> table_reads_;  // local -> (table, at)
  std::vector<std::string> table_decls_;  // composed tables, declared at the top of the function
  size_t table_decls_at_ = 0;             // the line they go before
  std::string inner_var_;                 // the inner loop's index when it walks one dimension
  std::set<std::string> inner_tables_;    // tables read at inner_var_ in the stage being written
  std::map<std::string, int64_t> run_offsets_;  // inside an InnerRun: its offsets
  // Transcendental values inlined in the stage being written, in the order
  // they were completed, and whether each was read at the stage's own element.
  std::vector<std::pair<ValueId, bool>> expensive_reads_;
  std::string stage_linear_;                     // the current loop's element index
  std::vector<ValueId> chunked_;                 // chunked_ emission: these values per chunk
  std::map<ValueId, std::string> chunk_buffers_;  // inside a chunk: value -> its buffer
  // Loop-invariant code motion out of the inner loop: while hoist_depth_ is
  // set, a let whose expression names nothing in variant_ (the inner loop's
  // variables and the locals computed from them) goes to the row scope, at
  // line hoist_at_, once per row rather than once per element.
  size_t hoist_depth_ = 0;  // scopes_.size() of the row scope; 0: off
  size_t hoist_at_ = 0;
  std::set<std::string> variant_;
  // Names declared by a line (`TYPE name ...`): they vary with the inner loop.
  void note_declarations(const std::string& text);
  std::vector<std::string> lines_;
  std::vector<std::map<std::string, std::string>> scopes_;  // CSE per open block
  int counter_ = 0;
  bool inner_divmod_ = false;  // the stage being written divides its inner index
};

}  // namespace orchid::codegen::cpu::detail
