// The kernel of one group: buffers, then one loop nest (stage) per
// materialized value (group outputs, reductions, shared transcendental
// values, Pads read by several taps) in topological order. A stage walks its
// value in rows: the outer loop is shared by a thread team (only when the
// stage has enough work), the inner loop over the trailing, contiguous dimensions
// (merged when no read needs them apart) is what GCC vectorizes. A reduction
// is an inner loop nest over the reduced axes per output element.
#include <algorithm>
#include <cmath>
#include <set>

#include "codegen/cpu/lower_internal.h"
#include "codegen/kernel_ir/hoist.h"
#include "ir/op_traits.h"
#include "reference/ops/op_utils.h"
#include "support/error.h"

namespace orchid::codegen::cpu::detail {

namespace {

// Below this many element operations a stage stays serial: starting the
// thread team costs more than it saves.
constexpr int64_t kParallelWork = int64_t(1) << 15;

// Reduction and transcendental chunks: elements computed per vectorized pass.
constexpr int64_t kChunk = 256;

// Runs of an inner loop (affine_runs): more than this, and the loop overhead
// outweighs contiguous loads.
constexpr size_t kMaxRuns = 8;

bool is_reduction(const Node& node) { return node.op.rfind("Reduce", 0) == 0; }

}  // namespace

bool is_expensive(const std::string& op) {
  const OpTraits* t = op_traits(op);
  return t != nullptr && t->transcendental;
}

namespace {

// Below this many elements a transpose stays inlined: its source fits in cache.
constexpr int64_t kTiledTransposeElements = int64_t(1) << 14;
// Tiles of a materialized transpose: kTransposeTile output rows that read
// one cache line of the source each, kTransposeRun elements per row.
constexpr int64_t kTransposeTile = 16;
constexpr int64_t kTransposeRun = 256;

// A large Transpose that moves its input's last (contiguous) axis: inlined
// into a row-major loop, its reads stride across the whole source, one cache
// line per element. It is materialized instead, by tiled loops
// (write_transpose_stage), and its readers read it in order.
bool moves_last_axis(const Graph& graph, const Node& node) {
  if (node.op != "Transpose") return false;
  const size_t rank = graph.type(node.outputs[0]).shape.size();
  if (rank < 2 || graph.type(node.outputs[0]).numel() < kTiledTransposeElements) return false;
  return transpose_perm(node, rank).back() != int64_t(rank - 1);
}

}  // namespace

Lowering::Lowering(const Graph& graph, const runtime::KernelGroup& group) : graph_(graph), group_(group) {
  for (size_t index : group.nodes) {
    for (ValueId out : graph.nodes()[index].outputs) {
      if (out != kNoValue) producer_[out] = index;
    }
  }
  std::map<ValueId, int> readers, slice_readers;
  for (size_t index : group.nodes) {
    for (ValueId id : graph.nodes()[index].inputs) {
      if (producer_.count(id)) ++readers[id];
      if (producer_.count(id) && graph.nodes()[index].op == "Slice") ++slice_readers[id];
    }
  }
  // Inlining recomputes a value at every read: fine for loads and cheap
  // arithmetic, not for transcendental functions read twice or more (the
  // exponentials of a softmax feed both its sum and its division). Those are
  // materialized like reductions.
  std::map<ValueId, int> cost;  // transcendental calls per element when inlined
  std::map<ValueId, int> ops;   // arithmetic operations per element when inlined
  for (size_t index : group.nodes) {
    const Node& node = graph.nodes()[index];
    const ValueId out = node.outputs[0];
    const bool is_output = std::find(group.outputs.begin(), group.outputs.end(), out) != group.outputs.end();
    // A Pad read by several window taps (pooling) is cheaper copied once:
    // the taps then read it without bounds tests, at affine addresses.
    int c = (is_expensive(node.op) || node.op == "Pad") ? 1 : 0;
    int n = is_layout(node.op) ? 0 : 1;
    for (ValueId id : node.inputs) {
      if (cost.count(id)) c += cost[id];
      if (ops.count(id)) n += ops[id];
    }
    // A computed value that many Slices read (the taps of a pooling's second
    // axis over the first axis's maxima) is stored once when recomputing it
    // at every tap costs more than a pass over memory: a 13x13 pool's taps
    // would recompute 12 maxima each, a 3x3 pool's only 2 (kept inline).
    constexpr int kTappedWork = 16;
    const bool tapped = !is_layout(node.op) && slice_readers[out] >= 2 && slice_readers[out] * n >= kTappedWork;
    if (is_output || is_reduction(node) || (c > 0 && readers[out] >= 2) || tapped || moves_last_axis(graph, node)) {
      stages_.push_back(out);
    } else {
      cost[out] = c;
      ops[out] = n;
    }
  }
}

void Lowering::add(kir::Stmt stmt) { current().push_back(std::move(stmt)); }

void Lowering::open(kir::Stmt stmt) {
  open_.push_back(std::move(stmt));
  scopes_.emplace_back();
}

void Lowering::close() {
  kir::Stmt done = std::move(open_.back());
  open_.pop_back();
  scopes_.pop_back();
  current().push_back(std::move(done));
}

void Lowering::declare_buffers() {
  auto add_buffer = [&](ValueId id, kir::BufferKind kind, const std::string& name, size_t position) {
    kir::Buffer b;
    b.name = name;
    b.kind = kind;
    b.type = data_type(graph_.type(id).dtype);
    b.size = graph_.type(id).numel();
    b.position = position;
    kernel_.buffers.push_back(b);
    buffer_[id] = name;
  };
  for (size_t k = 0; k < group_.inputs.size(); ++k) {
    const ValueId id = group_.inputs[k];
    const DType dtype = graph_.type(id).dtype;
    if (dtype != DType::Float32 && dtype != DType::Bool) continue;  // shape/index constants: used when lowering
    add_buffer(id, kir::BufferKind::Input, "in" + std::to_string(k), k);
  }
  for (size_t k = 0; k < group_.outputs.size(); ++k) {
    add_buffer(group_.outputs[k], kir::BufferKind::Output, "out" + std::to_string(k), k);
  }
  // Reductions and shared transcendental values read only inside the group
  // live in scratch of this call.
  for (ValueId id : stages_) {
    if (!buffer_.count(id)) add_buffer(id, kir::BufferKind::Scratch, fresh("scratch"), 0);
  }
  // Gather's constant indices, normalized, as a table.
  for (size_t index : group_.nodes) {
    const Node& node = graph_.nodes()[index];
    if (node.op != "Gather" || graph_.type(node.inputs[1]).numel() == 1) continue;
    const Shape& data = graph_.type(node.inputs[0]).shape;
    const int64_t dim = data[size_t(reference::normalize_axis(node.attrs.get_int("axis", 0), int64_t(data.size())))];
    std::vector<int64_t> values = graph_.value(node.inputs[1]).constant->to_i64_vector();
    for (int64_t& v : values) v = v < 0 ? v + dim : v;
    tables_[node.outputs[0]] = declare_table(values);
  }
}

// The innermost loop runs over the trailing dimensions from `split` on,
// merged into one contiguous range (a long loop vectorizes better than a
// short last dimension); the outer loop over the dimensions before it.
// Their indices, when some read needs them, are divisions of the inner
// index: then the stage is lowered again with a later split.
void Lowering::write_stage(ValueId value) {
  const Node& node = graph_.nodes()[producer_.at(value)];
  const size_t rank = graph_.type(value).shape.size();
  if (moves_last_axis(graph_, node)) {
    stage_reads_.clear();
    write_transpose_stage(node, value);
    join_row_nest(value, graph_.type(value).shape, 0, false);  // notes its reads
    return;
  }
  std::vector<StagePart> parts;
  size_t first_split = is_reduction(node) || rank == 0 ? (rank ? rank - 1 : 0) : 0;
  if (node.op == "Concat" && rank > 0) {
    // One loop nest per input over its own range: each element computes its
    // input's expression only, not every input's behind a select. The outer
    // loop covers the concat axis, so a row's place in the output is known.
    const size_t axis = size_t(reference::normalize_axis(node.attrs.get_int("axis", 0), int64_t(rank)));
    int64_t begin = 0;
    for (ValueId input : node.inputs) {
      if (graph_.type(input).numel() > 0) parts.push_back({input, axis, begin, true});
      begin += graph_.type(input).shape[axis];
    }
    first_split = axis + 1;
  } else {
    parts.push_back({value});
  }
  for (const StagePart& part : parts) {
    for (size_t split = first_split;; ++split) {
      // A lowering tried and dropped leaves no trace in the names.
      const int names_used = counter_;
      const auto table_reads = table_reads_;
      const auto drop = [&] {
        current().pop_back();
        counter_ = names_used;
        table_reads_ = table_reads;
      };
      inner_divmod_ = false;
      reads_in_row_ = true;
      stage_reads_.clear();
      pad_breaks_.clear();
      inner_tables_.clear();
      expensive_reads_.clear();
      int64_t inner = 1;
      for (size_t d = split; d < rank; ++d) inner *= graph_.type(part.source).shape[d];
      write_stage_loops(node, value, part, split, {{0, inner, 1, {}}});
      if (inner_divmod_ && split + 1 < rank) {
        drop();
        continue;
      }
      // Tables read at the inner index that are affine over a few ranges
      // (the interior of a reflect or edge pad) or per phase (an upsampling),
      // or Pads of computed values along it: lowered again, one loop per range.
      const std::vector<InnerRun> runs = affine_runs(inner);
      if (!runs.empty()) {
        drop();
        write_stage_loops(node, value, part, split, runs);
      } else if (std::vector<ValueId> chunked = chunkable(); !chunked.empty()) {
        // Two or more transcendental functions inlined into one loop: GCC
        // vectorizes it at half the rate of each function alone (a Mish,
        // x tanh(ln(1 + e^x)): 0.41 ms against 0.22 chunked, 131k floats).
        drop();
        chunked_ = std::move(chunked);
        write_stage_loops(node, value, part, split, {{0, inner, 1, {}}});
        chunked_.clear();
      }
      join_row_nest(value, graph_.type(part.source).shape, split);
      break;
    }
  }
}

bool Lowering::same_rows(const Shape& shape, size_t split) const {
  if (shape.size() != row_nest_.shape.size()) return false;
  int64_t rows = 1;
  for (size_t d = 0; d < split; ++d) rows *= shape[d];
  if (rows != row_nest_.rows) return false;
  // The same extents along the row dimensions, 1 where only one has it.
  for (size_t d = 0; d < std::max(split, row_nest_.split); ++d) {
    const int64_t mine = d < split ? shape[d] : 1, theirs = d < row_nest_.split ? row_nest_.shape[d] : 1;
    if (mine != theirs) return false;
  }
  return true;
}

bool Lowering::in_row(ValueId value, const Index& index) const {
  const Shape& shape = graph_.type(value).shape;
  const size_t split = row_nest_.members.at(value);
  if (shape.size() != stage_shape_.size()) return false;
  if (!index.has_dims) {
    return index.linear && stage_linear_ && kir::to_string(index.linear) == kir::to_string(stage_linear_) &&
           shape == stage_shape_ && split == stage_split_;
  }
  for (size_t d = 0; d < split; ++d) {
    if (shape[d] == 1) continue;
    if (d >= stage_split_ || d >= index.dims.size() || !index.dims[d]) return false;
    if (kir::to_string(index.dims[d]) != kir::to_string(row_dims_[d])) return false;
  }
  return true;
}

void Lowering::join_row_nest(ValueId value, const Shape& shape, size_t split, bool row_stage) {
  kir::Block& stages = current();
  kir::Stmt& mine = stages.back();
  // A Concat's parts loop over their input's rows, not the stored value's:
  // neither the in-row test nor the per-row arrays hold for them.
  const bool row_loop = row_stage && graph_.nodes()[producer_.at(value)].op != "Concat" &&
                        mine.kind == kir::StmtKind::Region && mine.body.size() == 1 &&
                        mine.body[0].kind == kir::StmtKind::Loop && mine.body[0].name == "o";
  const bool joins = row_loop && row_nest_.open && reads_in_row_ && same_rows(shape, split) && stages.size() >= 2;
  // Reads of other nests' values (and of this one's, unless the stage joins
  // it) are reads from outside: those values keep their buffers.
  for (ValueId read : stage_reads_) {
    const bool in_this_nest = joins && row_nest_.members.count(read);
    bool nested = false;
    for (const RowNest& nest : closed_nests_) nested = nested || nest.members.count(read);
    if ((nested || row_nest_.members.count(read)) && !in_this_nest) escaped_.insert(read);
  }
  if (joins) {
    kir::Stmt& nest = stages[stages.size() - 2];
    for (kir::Stmt& s : mine.body[0].body) nest.body[0].body.push_back(std::move(s));
    nest.work += mine.work;
    nest.parallel = nest.work >= kParallelWork;
    nest.label += "; " + mine.label;
    stages.pop_back();
    row_nest_.members[value] = split;
    return;
  }
  if (row_nest_.open) closed_nests_.push_back(row_nest_);
  row_nest_ = RowNest();
  if (!row_loop) return;
  row_nest_.open = true;
  row_nest_.region = stages.size() - 1;
  row_nest_.shape = shape;
  row_nest_.split = split;
  row_nest_.rows = 1;
  for (size_t d = 0; d < split; ++d) row_nest_.rows *= shape[d];
  row_nest_.members[value] = split;
}

std::vector<ValueId> Lowering::chunkable() const {
  std::vector<ValueId> result;
  for (const auto& [value, own_index] : expensive_reads_) {
    if (!own_index) return {};
    if (std::find(result.begin(), result.end(), value) == result.end()) result.push_back(value);
  }
  return result.size() >= 2 ? result : std::vector<ValueId>{};
}

std::vector<Lowering::InnerRun> Lowering::affine_runs(int64_t inner) const {
  // Upsamplings by more than this are rare; each phase is a copy of the body.
  constexpr int64_t kMaxPeriod = 8;
  if (inner_tables_.empty() && !pad_breaks_.empty()) {
    // Pads of computed values along the inner loop: a run inside the input
    // (no clamped index, no test) and runs in the padding (the pad value).
    std::vector<InnerRun> runs;
    int64_t at = 0;
    for (int64_t point : pad_breaks_) {
      if (point <= at || point >= inner) continue;
      runs.push_back({at, point, 1, {}});
      at = point;
    }
    runs.push_back({at, inner, 1, {}});
    return runs.size() > 1 && runs.size() <= kMaxRuns ? runs : std::vector<InnerRun>{};
  }
  if (inner_tables_.empty()) return {};
  for (int64_t period = 1; period <= kMaxPeriod; ++period) {
    if (inner % period != 0) continue;
    std::vector<InnerRun> runs = affine_runs(inner, period);
    if (!runs.empty()) return runs;
  }
  return {};
}

std::vector<Lowering::InnerRun> Lowering::affine_runs(int64_t inner, int64_t period) const {
  constexpr int64_t kMinLongestRun = 8;  // iterations of the run's loop
  std::vector<InnerRun> runs;
  for (int64_t k = 0; k < inner / period; ++k) {
    std::map<std::string, std::vector<int64_t>> offsets;
    for (const std::string& table : inner_tables_) {
      for (int64_t p = 0; p < period; ++p) offsets[table].push_back(table_values_.at(table).at(size_t(period * k + p)) - k);
    }
    if (runs.empty() || offsets != runs.back().offsets) {
      if (runs.size() == kMaxRuns) return {};
      runs.push_back({period * k, period * k, period, std::move(offsets)});
    }
    runs.back().end = period * (k + 1);
  }
  int64_t longest = 0;
  for (const InnerRun& run : runs) longest = std::max(longest, (run.end - run.begin) / period);
  return longest >= kMinLongestRun ? runs : std::vector<InnerRun>{};
}

void Lowering::write_stage_loops(const Node& node, ValueId value, const StagePart& part, size_t split,
                                 const std::vector<InnerRun>& runs) {
  using kir::Type;
  // The loops walk the part's shape (a Concat input's, or the value's).
  const Shape& shape = graph_.type(part.source).shape;
  const Shape& stored = graph_.type(value).shape;
  const size_t rank = shape.size();
  int64_t inner = 1;
  for (size_t d = split; d < rank; ++d) inner *= shape[d];
  const int64_t rows = graph_.type(part.source).numel() / std::max<int64_t>(inner, 1);
  const int64_t work = is_reduction(node) ? graph_.type(node.inputs[0]).numel() : graph_.type(part.source).numel();
  const std::string label = graph_.value(value).name + " = " + node.op +
                            (part.concat ? " (" + graph_.value(part.source).name + " at " +
                                               std::to_string(part.begin) + ")"
                                         : "");
  open(kir::region_stmt(label, (rows > 1 || inner > 1) && work >= kParallelWork, work));
  Index index;
  index.has_dims = true;
  index.dims.assign(rank, kir::int_const(0));
  const Expr o = kir::var("o");
  if (rows > 1) {
    open(kir::loop_stmt("o", kir::int_const(0), kir::int_const(rows), 1, kir::LoopRole::Shared));
    // The row's outer indices, once per row.
    int64_t stride = 1;
    for (size_t d = split; d-- > 0;) {
      Expr e = o;
      if (shape[d] == 1) {
        e = kir::int_const(0);
      } else {
        e = kir::div(e, stride);
        if (stride * shape[d] != rows) e = kir::mod(e, shape[d]);
      }
      index.dims[d] = let(Type::I64, e);
      stride *= shape[d];
    }
  }
  row_dims_.assign(index.dims.begin(), index.dims.begin() + long(split));
  stage_shape_ = shape;
  stage_split_ = split;
  // Where the row starts in the stored value: a Concat part's rows sit at
  // their offset along the axis (before `split`, so the inner range is
  // contiguous in both).
  Expr row_start = kir::int_const(0);
  if (part.concat) {
    int64_t stride = inner;
    for (size_t d = split; d-- > 0;) {
      row_start = kir::add(row_start, kir::mul(d == part.axis ? kir::add(index.dims[d], part.begin) : index.dims[d],
                                               stride));
      stride *= stored[d];
    }
    if (rows > 1) row_start = let(Type::I64, row_start);
  }
  // The inner index names one dimension (tables read at it may be affine).
  inner_var_ = split + 1 == rank && inner > 1 ? "i" : "";
  // The inner index: i, or period k + p in a periodic run's phase p.
  Expr i = inner == 1 ? kir::int_const(0) : kir::var("i");
  // The index of element i of the inner range, in a fresh loop scope.
  const auto element_index = [&] {
    Index at = index;
    if (split + 1 == rank) {
      at.dims[split] = i;
    } else if (split < rank) {
      for (size_t d = split; d < rank; ++d) at.dims[d] = nullptr;
      at.lazy_from = i;
      at.lazy_split = split;
    }
    at.linear = let(Type::I64, kir::add(rows > 1 ? kir::mul(o, inner) : kir::int_const(0), i));
    stage_linear_ = at.linear;
    return at;
  };
  const auto store_element = [&](Index& at) {
    const Expr store_at = part.concat ? let(Type::I64, kir::add(row_start, i)) : at.linear;
    if (is_reduction(node)) {
      write_reduction_body(node, value, at, buffer_.at(value), store_at);
    } else {
      add(kir::store_stmt(buffer_.at(value), store_at, part.concat ? value_at(part.source, at) : compute(value, at)));
    }
  };
  const kir::LoopRole inner_role = rows <= 1 && inner > 1 ? kir::LoopRole::Shared : kir::LoopRole::Serial;
  for (const InnerRun& run : runs) {
    const Expr begin = kir::int_const(run.begin), end = kir::int_const(run.end);
    const auto phase_offsets = [&](int64_t p) {
      run_offsets_.clear();
      for (const auto& [table, offsets] : run.offsets) run_offsets_[table] = offsets[size_t(p)];
    };
    if (run.period > 1) {
      // One loop over k, the body once per phase: the table reads are loads
      // at k + offset, the stores of the phases one contiguous group.
      const Expr k = kir::var("k");
      open(kir::loop_stmt("k", kir::int_const(run.begin / run.period), kir::int_const(run.end / run.period), 1,
                          inner_role));
      run_base_ = k;
      for (int64_t p = 0; p < run.period; ++p) {
        phase_offsets(p);
        i = let(Type::I64, kir::add(kir::mul(k, run.period), p));
        inner_var_ = i->name;
        Index at = element_index();
        store_element(at);
      }
      close();
      i = kir::var("i");
      inner_var_ = "i";
      continue;
    }
    phase_offsets(0);
    run_base_ = i;
    run_begin_ = run.begin;
    run_end_ = run.end;
    if (chunked_.empty() && inner == 1) {  // one element per row: no inner loop
      Index at = element_index();
      store_element(at);
      continue;
    }
    if (chunked_.empty()) {
      open(kir::loop_stmt("i", begin, end, 1, inner_role));
      Index at = element_index();
      store_element(at);
      close();
      continue;
    }
    // Each transcendental value of the chunk in a loop of its own, into an
    // array the next loops read: one function's code per vectorized loop.
    const Expr ib = kir::var("ib");
    open(kir::loop_stmt("ib", begin, end, kChunk, inner_role));
    const Expr chunk_end = let(Type::I64, kir::min(kir::add(ib, kChunk), end));
    std::map<ValueId, std::string> arrays;
    for (ValueId expensive : chunked_) {
      const std::string name = fresh("c");
      add(kir::array_stmt(name, data_type(graph_.type(expensive).dtype), kChunk));
      open(kir::loop_stmt("i", ib, chunk_end));
      Index at = element_index();
      chunk_buffers_ = arrays;
      add(kir::store_stmt(name, kir::binary(kir::Op::Sub, kir::var("i"), ib), compute(expensive, at)));
      close();
      arrays[expensive] = name;
    }
    open(kir::loop_stmt("i", ib, chunk_end));
    Index at = element_index();
    chunk_buffers_ = arrays;
    store_element(at);
    close();
    chunk_buffers_.clear();
    close();
  }
  run_offsets_.clear();
  run_base_ = nullptr;
  inner_var_.clear();
  stage_linear_ = nullptr;
  if (rows > 1) close();
  close();
}

// out dimension `a` reads the source's last (contiguous) axis, out dimension
// `b` (the last) is contiguous in the output: tiles of kTransposeTile values
// of a by kTransposeRun of b, so that each source cache line read serves a
// whole tile row and each output row is written in order.
void Lowering::write_transpose_stage(const Node& node, ValueId value) {
  using kir::Type;
  const Shape& shape = graph_.type(value).shape;
  const size_t rank = shape.size(), b = rank - 1;
  const std::vector<int64_t> perm = transpose_perm(node, rank);
  const size_t a = size_t(std::find(perm.begin(), perm.end(), int64_t(rank - 1)) - perm.begin());
  const int64_t tiles_a = (shape[a] + kTransposeTile - 1) / kTransposeTile;
  const int64_t tiles_b = (shape[b] + kTransposeRun - 1) / kTransposeRun;
  int64_t others = 1;
  for (size_t d = 0; d < rank; ++d) others *= d == a || d == b ? 1 : shape[d];
  const int64_t tasks = others * tiles_a * tiles_b;
  const int64_t work = shape_numel(shape);
  open(kir::region_stmt(graph_.value(value).name + " = Transpose (tiled)", work >= kParallelWork, work));
  open(kir::loop_stmt("o", kir::int_const(0), kir::int_const(tasks), 1, kir::LoopRole::Shared));
  const Expr o = kir::var("o");
  Index index;
  index.has_dims = true;
  index.dims.assign(rank, kir::int_const(0));
  const Expr b0 = let(Type::I64, kir::mul(kir::mod(o, tiles_b), kTransposeRun));
  const Expr a0 = let(Type::I64, kir::mul(kir::mod(kir::div(o, tiles_b), tiles_a), kTransposeTile));
  int64_t stride = tiles_a * tiles_b;
  for (size_t d = rank; d-- > 0;) {
    if (d == a || d == b || shape[d] == 1) continue;
    index.dims[d] = let(Type::I64, kir::mod(kir::div(o, stride), shape[d]));
    stride *= shape[d];
  }
  open(kir::loop_stmt("ta", a0, kir::min(kir::add(a0, kTransposeTile), kir::int_const(shape[a]))));
  open(kir::loop_stmt("i", b0, kir::min(kir::add(b0, kTransposeRun), kir::int_const(shape[b]))));
  index.dims[a] = kir::var("ta");
  index.dims[b] = kir::var("i");
  const Expr at = linear_of(shape, index);
  add(kir::store_stmt(buffer_.at(value), at, compute(value, index)));
  close();
  close();
  close();
  close();
}

// The reduced axes as loops per output element, the innermost reduced
// range folded in chunks of kChunk (kir Fold: Max/Min NaN-propagating, Sums
// in float per chunk and in double across chunks). A stored input's
// trailing reduced axes are one contiguous range, folded where it lies; an
// inlined expression is first computed into a chunk array by a loop GCC
// vectorizes. The order of the sums differs from the interpreter's, within
// a few float ulp (as ORT's and OpenVINO's do).
void Lowering::write_reduction_body(const Node& node, ValueId value, Index& index, const std::string& buffer,
                                    const Expr& store_at) {
  using kir::Type;
  const ValueId x = node.inputs[0];
  const Shape& in = graph_.type(x).shape;
  const Shape& out = graph_.type(value).shape;
  std::vector<bool> reduced(in.size(), false);
  for (int64_t axis : graph_.value(node.inputs[1]).constant->to_i64_vector()) {
    reduced[size_t(reference::normalize_axis(axis, int64_t(in.size())))] = true;
  }
  const bool keepdims = node.attrs.get_int("keepdims", 1) != 0;
  const kir::Reduce reduce = node.op == "ReduceSum"   ? kir::Reduce::Sum
                             : node.op == "ReduceMax" ? kir::Reduce::Max
                                                      : kir::Reduce::Min;
  const std::vector<Expr> dims = dims_of(out, index);
  const std::string acc = fresh("acc");
  const Type acc_type = reduce == kir::Reduce::Sum ? Type::F64 : Type::F32;
  const Expr init = reduce == kir::Reduce::Sum ? kir::float_const(0, Type::F64)
                                               : kir::float_const(reduce == kir::Reduce::Max ? -INFINITY : INFINITY);
  add(kir::let_stmt(acc, acc_type, init, true));
  // The trailing axes that are all reduced (or of one element): `run`
  // contiguous elements of x per output element.
  size_t suffix = in.size();
  int64_t run = 1;
  while (suffix > 0 && (reduced[suffix - 1] || in[suffix - 1] == 1)) run *= in[--suffix];
  const bool in_place = run > 1 && buffer_.count(x);
  size_t innermost = in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    if (reduced[d] && in[d] > 1) innermost = d;
  }
  Index element;
  element.has_dims = true;
  size_t kept = 0, loops = 0, chunk_dim = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!reduced[d]) {
      element.dims.push_back(dims[keepdims ? d : kept++]);
      continue;
    }
    if (keepdims) ++kept;
    if (in[d] == 1 || (in_place && d >= suffix)) {
      element.dims.push_back(kir::int_const(0));
      continue;
    }
    if (d == innermost) {
      chunk_dim = element.dims.size();
      element.dims.push_back(nullptr);
      continue;
    }
    const std::string r = fresh("r");
    ++loops;
    open(kir::loop_stmt(r, kir::int_const(0), kir::int_const(in[d])));
    element.dims.push_back(kir::var(r));
  }
  const Expr acc_var = kir::var(acc, acc_type);
  if (innermost == in.size()) {  // every reduced axis of one element
    const Expr v = value_at(x, element);
    add(kir::assign_stmt(acc, reduce == kir::Reduce::Sum ? kir::binary(kir::Op::Add, acc_var, kir::cast(Type::F64, v))
                              : kir::binary(reduce == kir::Reduce::Max ? kir::Op::Max : kir::Op::Min, v, acc_var)));
  } else {
    const std::string r = fresh("r");
    const int64_t length = in_place ? run : in[innermost];
    Expr base = kir::int_const(0), count = kir::int_const(length);
    if (length > kChunk) {
      open(kir::loop_stmt(r + "b", kir::int_const(0), kir::int_const(length), kChunk));
      base = kir::var(r + "b");
      count = let(Type::I64, kir::min(kir::int_const(kChunk), kir::binary(kir::Op::Sub, kir::int_const(length), base)));
    }
    if (in_place) {
      const Expr first = load_buffer(x, element);  // the run's first element
      add(kir::fold_stmt(acc, reduce, buffer_.at(x), count, kir::add(first->args[0], base)));
    } else {
      const std::string array = r + "buf";
      add(kir::array_stmt(array, Type::F32, std::min(kChunk, length)));
      const Expr j = kir::var(r + "j");
      open(kir::loop_stmt(r + "j", kir::int_const(0), count));
      element.dims[chunk_dim] = let(Type::I64, kir::add(base, j));
      add(kir::store_stmt(array, j, value_at(x, element)));
      close();
      add(kir::fold_stmt(acc, reduce, array, count));
    }
    if (length > kChunk) close();
  }
  for (size_t k = 0; k < loops; ++k) close();
  add(kir::store_stmt(buffer, store_at, kir::cast(Type::F32, acc_var)));
}

void Lowering::contract_row_values() {
  // Larger rows keep their buffer: the array lives on each thread's stack.
  constexpr int64_t kRowArrayElements = 16384;
  for (const RowNest& nest : closed_nests_) {
    if (nest.members.size() < 2) continue;
    kir::Stmt& row_loop = kernel_.body.at(nest.region).body.at(0);
    for (const auto& [value, split] : nest.members) {
      const std::string& name = buffer_.at(value);
      auto buffer = std::find_if(kernel_.buffers.begin(), kernel_.buffers.end(),
                                 [&name](const kir::Buffer& b) { return b.name == name; });
      if (escaped_.count(value) || buffer->kind != kir::BufferKind::Scratch) continue;
      const Shape& shape = graph_.type(value).shape;
      int64_t row = 1;
      for (size_t d = split; d < shape.size(); ++d) row *= shape[d];
      if (row > kRowArrayElements) continue;
      const std::string array = buffer->name + "_row";
      kir::relocate_buffer(row_loop.body, buffer->name, array, kir::mul(kir::var("o"), row));
      row_loop.body.insert(row_loop.body.begin(), kir::array_stmt(array, buffer->type, row));
      kernel_.buffers.erase(buffer);
    }
  }
}

kir::Kernel Lowering::lower() {
  kernel_ = kir::Kernel();
  kernel_.name = group_.name;
  open_.assign(1, kir::block_stmt(""));
  scopes_.assign(1, {});
  tables_.clear();
  table_values_.clear();
  composed_.clear();
  table_reads_.clear();
  counter_ = 0;
  row_nest_ = RowNest();
  closed_nests_.clear();
  escaped_.clear();
  declare_buffers();
  for (ValueId value : stages_) write_stage(value);
  if (row_nest_.open) closed_nests_.push_back(row_nest_);
  kernel_.body = std::move(open_.back().body);
  open_.clear();
  contract_row_values();
  kir::hoist_invariants(kernel_.body);
  return std::move(kernel_);
}

}  // namespace orchid::codegen::cpu::detail
