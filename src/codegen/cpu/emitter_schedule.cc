// The function of one group: buffers, then one loop nest (stage) per
// materialized value (group outputs, reductions, shared transcendental
// values, Pads read by several taps) in topological order. A stage walks its
// value in rows: the outer loop runs in parallel (OpenMP, only when the stage
// has enough work), the inner loop over the trailing, contiguous dimensions
// (merged when no read needs them apart) is what GCC vectorizes. A reduction
// is an inner loop nest over the reduced axes per output element.
#include <algorithm>
#include <cmath>
#include <regex>
#include <set>

#include "codegen/cpu/emitter_internal.h"
#include "reference/ops/op_utils.h"
#include "support/error.h"

namespace orchid::codegen::cpu::detail {

namespace {

// Below this many element operations a stage stays serial: starting the
// thread team costs more than it saves.
constexpr int64_t kParallelWork = int64_t(1) << 15;

// Reduction chunks: elements computed per vectorized pass, and partial
// accumulators folded in parallel lanes.
constexpr int64_t kChunk = 256;
constexpr int64_t kLanes = 8;

const std::set<std::string> kExpensive = {"Exp",  "Log",  "Tanh",  "Sigmoid", "Erf",   "Pow",   "Sin",
                                          "Cos",  "Tan",  "Asin",  "Acos",    "Atan",  "Sinh",  "Cosh",
                                          "Asinh", "Acosh", "Atanh"};

bool is_reduction(const Node& node) { return node.op.rfind("Reduce", 0) == 0; }

}  // namespace

bool is_expensive(const std::string& op) { return kExpensive.count(op) > 0; }

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

KernelWriter::KernelWriter(const Graph& graph, const runtime::KernelGroup& group) : graph_(graph), group_(group) {
  for (size_t index : group.nodes) {
    for (ValueId out : graph.nodes()[index].outputs) {
      if (out != kNoValue) producer_[out] = index;
    }
  }
  std::map<ValueId, int> readers;
  for (size_t index : group.nodes) {
    for (ValueId id : graph.nodes()[index].inputs) {
      if (producer_.count(id)) ++readers[id];
    }
  }
  // Inlining recomputes a value at every read: fine for loads and cheap
  // arithmetic, not for transcendental functions read twice or more (the
  // exponentials of a softmax feed both its sum and its division). Those are
  // materialized like reductions.
  std::map<ValueId, int> cost;  // transcendental calls per element when inlined
  for (size_t index : group.nodes) {
    const Node& node = graph.nodes()[index];
    const ValueId out = node.outputs[0];
    const bool is_output = std::find(group.outputs.begin(), group.outputs.end(), out) != group.outputs.end();
    // A Pad read by several window taps (pooling) is cheaper copied once:
    // the taps then read it without bounds tests, at affine addresses.
    int c = (is_expensive(node.op) || node.op == "Pad") ? 1 : 0;
    for (ValueId id : node.inputs) {
      if (cost.count(id)) c += cost[id];
    }
    if (is_output || is_reduction(node) || (c > 0 && readers[out] >= 2) || moves_last_axis(graph, node)) {
      stages_.push_back(out);
    } else {
      cost[out] = c;
    }
  }
}

void KernelWriter::line(const std::string& text) {
  if (hoist_depth_) note_declarations(text);
  lines_.push_back(std::string(2 * scopes_.size(), ' ') + text);
}

void KernelWriter::note_declarations(const std::string& text) {
  static const std::regex declaration(R"(\b(?:int64_t|float|double|bool|int)\s+([A-Za-z_]\w*))");
  for (std::sregex_iterator it(text.begin(), text.end(), declaration), end; it != end; ++it) {
    variant_.insert((*it)[1].str());
  }
}

void KernelWriter::open(const std::string& header) {
  line(header);
  scopes_.emplace_back();
}

void KernelWriter::close() {
  scopes_.pop_back();
  line("}");
}

void KernelWriter::declare_buffers() {
  for (size_t k = 0; k < group_.inputs.size(); ++k) {
    const ValueId id = group_.inputs[k];
    const DType dtype = graph_.type(id).dtype;
    if (dtype != DType::Float32 && dtype != DType::Bool) continue;  // shape/index constants: used at emit time
    const std::string name = "in" + std::to_string(k);
    const std::string type = c_type(dtype);
    line("const " + type + "* " + name + "_arg = static_cast<const " + type + "*>(inputs[" + std::to_string(k) +
         "]);");
    local_decls_.push_back("const " + type + "* __restrict " + name + " = " + name + "_arg;");
    buffer_[id] = name;
  }
  for (size_t k = 0; k < group_.outputs.size(); ++k) {
    const ValueId id = group_.outputs[k];
    const std::string name = "out" + std::to_string(k);
    const std::string type = c_type(graph_.type(id).dtype);
    line(type + "* " + name + "_arg = static_cast<" + type + "*>(outputs[" + std::to_string(k) + "]);");
    local_decls_.push_back(type + "* __restrict " + name + " = " + name + "_arg;");
    buffer_[id] = name;
  }
  // Reductions and shared transcendental values read only inside the group
  // live in scratch of this call.
  for (ValueId id : stages_) {
    if (buffer_.count(id)) continue;
    const std::string name = fresh("scratch");
    const std::string type = c_type(graph_.type(id).dtype);
    line("std::unique_ptr<" + type + "[]> " + name + "_owner(new " + type + "[" +
         std::to_string(graph_.type(id).numel()) + "]);");
    line(type + "* " + name + "_arg = " + name + "_owner.get();");
    local_decls_.push_back(type + "* __restrict " + name + " = " + name + "_arg;");
    buffer_[id] = name;
  }
  // Gather's constant indices, normalized, as a table (declared, with the
  // composed ones, at the top of the function when it is written).
  for (size_t index : group_.nodes) {
    const Node& node = graph_.nodes()[index];
    if (node.op != "Gather" || graph_.type(node.inputs[1]).numel() == 1) continue;
    const Shape& data = graph_.type(node.inputs[0]).shape;
    int64_t axis = node.attrs.get_int("axis", 0);
    if (axis < 0) axis += int64_t(data.size());
    const int64_t dim = data[size_t(axis)];
    std::vector<int64_t> values = graph_.value(node.inputs[1]).constant->to_i64_vector();
    for (int64_t& v : values) v = v < 0 ? v + dim : v;
    tables_[node.outputs[0]] = declare_table(values);
  }
  table_decls_at_ = lines_.size();
}

// The innermost loop runs over the trailing dimensions from `split` on,
// merged into one contiguous range (a long loop vectorizes better than a
// short last dimension); the outer loop over the dimensions before it.
// Their indices, when some read needs them, are divisions of the inner
// index: then the stage is written again with a later split.
void KernelWriter::write_stage(ValueId value) {
  const Node& node = graph_.nodes()[producer_.at(value)];
  const size_t rank = graph_.type(value).shape.size();
  if (moves_last_axis(graph_, node)) return write_transpose_stage(node, value);
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
      const size_t saved_lines = lines_.size();
      const auto saved_scopes = scopes_;
      inner_divmod_ = false;
      inner_tables_.clear();
      expensive_reads_.clear();
      int64_t inner = 1;
      for (size_t d = split; d < rank; ++d) inner *= graph_.type(part.source).shape[d];
      write_stage_loops(node, value, part, split, {{0, inner, {}}});
      if (inner_divmod_ && split + 1 < rank) {
        lines_.resize(saved_lines);
        scopes_ = saved_scopes;
        continue;
      }
      // Tables read at the inner index that are affine over a few ranges
      // (the interior of a reflect or edge pad): written again, one loop per range.
      const std::vector<InnerRun> runs = affine_runs(inner);
      if (runs.size() > 1) {
        lines_.resize(saved_lines);
        scopes_ = saved_scopes;
        write_stage_loops(node, value, part, split, runs);
      } else if (std::vector<ValueId> chunked = chunkable(); !chunked.empty()) {
        // Two or more transcendental functions inlined into one loop: GCC
        // vectorizes it at half the rate of each function alone (a Mish,
        // x tanh(ln(1 + e^x)): 0.41 ms against 0.22 chunked, 131k floats).
        lines_.resize(saved_lines);
        scopes_ = saved_scopes;
        chunked_ = std::move(chunked);
        write_stage_loops(node, value, part, split, {{0, inner, {}}});
        chunked_.clear();
      }
      break;
    }
  }
}

std::vector<ValueId> KernelWriter::chunkable() const {
  std::vector<ValueId> result;
  for (const auto& [value, own_index] : expensive_reads_) {
    if (!own_index) return {};
    if (std::find(result.begin(), result.end(), value) == result.end()) result.push_back(value);
  }
  return result.size() >= 2 ? result : std::vector<ValueId>{};
}

std::vector<KernelWriter::InnerRun> KernelWriter::affine_runs(int64_t inner) const {
  // More ranges than this, and the loop overhead outweighs contiguous loads.
  constexpr size_t kMaxRuns = 8;
  constexpr int64_t kMinLongestRun = 8;
  if (inner_tables_.empty()) return {};
  std::vector<InnerRun> runs;
  for (int64_t i = 0; i < inner; ++i) {
    std::map<std::string, int64_t> offsets;
    for (const std::string& table : inner_tables_) offsets[table] = table_values_.at(table).at(size_t(i)) - i;
    if (runs.empty() || offsets != runs.back().offsets) {
      if (runs.size() == kMaxRuns) return {};
      runs.push_back({i, i, std::move(offsets)});
    }
    runs.back().end = i + 1;
  }
  int64_t longest = 0;
  for (const InnerRun& run : runs) longest = std::max(longest, run.end - run.begin);
  return longest >= kMinLongestRun ? runs : std::vector<InnerRun>{};
}

void KernelWriter::write_stage_loops(const Node& node, ValueId value, const StagePart& part, size_t split,
                                     const std::vector<InnerRun>& runs) {
  // The loops walk the part's shape (a Concat input's, or the value's).
  const Shape& shape = graph_.type(part.source).shape;
  const Shape& stored = graph_.type(value).shape;
  const size_t rank = shape.size();
  int64_t inner = 1;
  for (size_t d = split; d < rank; ++d) inner *= shape[d];
  const int64_t rows = graph_.type(part.source).numel() / std::max<int64_t>(inner, 1);
  const int64_t work = is_reduction(node) ? graph_.type(node.inputs[0]).numel() : graph_.type(part.source).numel();
  // The buffers are re-declared __restrict inside the parallel region: the
  // outlined OpenMP function otherwise reads them from a shared struct that
  // any store might alias, which defeats vectorization.
  const bool parallel = rows > 1 || inner > 1;
  open("{  // " + graph_.value(value).name + " = " + node.op +
       (part.concat ? " (" + graph_.value(part.source).name + " at " + std::to_string(part.begin) + ")" : ""));
  if (parallel) {
    line("#pragma omp parallel if(" + std::to_string(work) + " >= " + std::to_string(kParallelWork) + ")");
    open("{");
  }
  for (const std::string& decl : local_decls_) line(decl);
  Index index;
  index.has_dims = true;
  index.dims.assign(rank, "0");
  if (rows > 1) {
    line("#pragma omp for");
    open("for (int64_t o = 0; o < " + std::to_string(rows) + "; ++o) {");
    // The row's outer indices, once per row.
    int64_t stride = 1;
    for (size_t d = split; d-- > 0;) {
      std::string e = "o";
      if (shape[d] == 1) e = "0";
      else {
        if (stride != 1) e = "(o / " + std::to_string(stride) + ")";
        if (stride * shape[d] != rows) e = "(" + e + " % " + std::to_string(shape[d]) + ")";
      }
      index.dims[d] = let("int64_t", e);
      stride *= shape[d];
    }
  }
  // Where the row starts in the stored value: a Concat part's rows sit at
  // their offset along the axis (before `split`, so the inner range is
  // contiguous in both).
  std::string row_start = "0";
  if (part.concat) {
    int64_t stride = inner;
    for (size_t d = split; d-- > 0;) {
      row_start = index_sum(row_start, index_mul(d == part.axis ? index_add(index.dims[d], part.begin) : index.dims[d],
                                                 stride));
      stride *= stored[d];
    }
    if (rows > 1) row_start = let("int64_t", row_start);
  }
  // The inner index names one dimension (tables read at it may be affine).
  inner_var_ = split + 1 == rank && inner > 1 ? "i" : "";
  // The index of element i of the inner range, in a fresh loop scope.
  const auto element_index = [&] {
    Index at = index;
    const std::string i = inner == 1 ? "0" : "i";
    if (split + 1 == rank) {
      at.dims[split] = i;
    } else if (split < rank) {
      for (size_t d = split; d < rank; ++d) at.dims[d].clear();
      at.lazy_from = i;
      at.lazy_split = split;
    }
    at.linear = let("int64_t", index_sum(rows > 1 ? index_mul("o", inner) : "0", i));
    stage_linear_ = at.linear;
    return at;
  };
  const auto store_element = [&](Index& at) {
    const std::string store_at = part.concat ? let("int64_t", index_sum(row_start, inner == 1 ? "0" : "i")) : at.linear;
    const std::string store = buffer_.at(value) + "[" + store_at + "]";
    if (is_reduction(node)) {
      write_reduction_body(node, value, at, store);
    } else {
      line(store + " = " + (part.concat ? value_at(part.source, at) : compute(value, at)) + ";");
    }
  };
  for (const InnerRun& run : runs) {
    // Row-invariant values (a channel's mean and scale) go before the loop
    // (and its worksharing pragma).
    hoist_depth_ = scopes_.size();
    hoist_at_ = lines_.size();
    variant_ = {"i"};
    if (rows <= 1 && inner > 1) line("#pragma omp for");
    run_offsets_ = run.offsets;
    const std::string begin = std::to_string(run.begin), end = std::to_string(run.end);
    if (chunked_.empty()) {
      open("for (int64_t i = " + begin + "; i < " + end + "; ++i) {");
      Index at = element_index();
      store_element(at);
      close();
    } else {
      // Each transcendental value of the chunk in a loop of its own, into a
      // buffer the next loops read: one function's code per vectorized loop.
      const std::string chunk = std::to_string(kChunk);
      open("for (int64_t ib = " + begin + "; ib < " + end + "; ib += " + chunk + ") {");
      line("const int64_t in = std::min<int64_t>(" + chunk + ", " + end + " - ib);");
      std::map<ValueId, std::string> buffers;
      for (ValueId expensive : chunked_) {
        const std::string name = fresh("c");
        line(std::string(c_type(graph_.type(expensive).dtype)) + " " + name + "[" + chunk + "];");
        open("for (int64_t i = ib; i < ib + in; ++i) {");
        Index at = element_index();
        chunk_buffers_ = buffers;
        line(name + "[i - ib] = " + compute(expensive, at) + ";");
        close();
        buffers[expensive] = name;
      }
      open("for (int64_t i = ib; i < ib + in; ++i) {");
      Index at = element_index();
      chunk_buffers_ = buffers;
      store_element(at);
      close();
      chunk_buffers_.clear();
      close();
    }
    hoist_depth_ = 0;
  }
  run_offsets_.clear();
  inner_var_.clear();
  if (rows > 1) close();
  if (parallel) close();
  close();
}

// out dimension `a` reads the source's last (contiguous) axis, out dimension
// `b` (the last) is contiguous in the output: tiles of kTransposeTile values
// of a by kTransposeRun of b, so that each source cache line read serves a
// whole tile row and each output row is written in order.
void KernelWriter::write_transpose_stage(const Node& node, ValueId value) {
  const Shape& shape = graph_.type(value).shape;
  const size_t rank = shape.size(), b = rank - 1;
  const std::vector<int64_t> perm = transpose_perm(node, rank);
  const size_t a = size_t(std::find(perm.begin(), perm.end(), int64_t(rank - 1)) - perm.begin());
  const int64_t tiles_a = (shape[a] + kTransposeTile - 1) / kTransposeTile;
  const int64_t tiles_b = (shape[b] + kTransposeRun - 1) / kTransposeRun;
  int64_t others = 1;
  for (size_t d = 0; d < rank; ++d) others *= d == a || d == b ? 1 : shape[d];
  const int64_t tasks = others * tiles_a * tiles_b;
  open("{  // " + graph_.value(value).name + " = Transpose (tiled)");
  line("#pragma omp parallel if(" + std::to_string(shape_numel(shape)) + " >= " + std::to_string(kParallelWork) + ")");
  open("{");
  for (const std::string& decl : local_decls_) line(decl);
  line("#pragma omp for");
  open("for (int64_t o = 0; o < " + std::to_string(tasks) + "; ++o) {");
  Index index;
  index.has_dims = true;
  index.dims.assign(rank, "0");
  const std::string b0 = let("int64_t", index_mul("(o % " + std::to_string(tiles_b) + ")", kTransposeRun));
  const std::string a0 =
      let("int64_t", index_mul("((o / " + std::to_string(tiles_b) + ") % " + std::to_string(tiles_a) + ")",
                               kTransposeTile));
  int64_t stride = tiles_a * tiles_b;
  for (size_t d = rank; d-- > 0;) {
    if (d == a || d == b || shape[d] == 1) continue;
    index.dims[d] = let("int64_t", "((o / " + std::to_string(stride) + ") % " + std::to_string(shape[d]) + ")");
    stride *= shape[d];
  }
  open("for (int64_t ta = " + a0 + "; ta < std::min<int64_t>(" + a0 + " + " + std::to_string(kTransposeTile) + ", " +
       std::to_string(shape[a]) + "); ++ta) {");
  open("for (int64_t i = " + b0 + "; i < std::min<int64_t>(" + b0 + " + " + std::to_string(kTransposeRun) + ", " +
       std::to_string(shape[b]) + "); ++i) {");
  index.dims[a] = "ta";
  index.dims[b] = "i";
  const std::string store = buffer_.at(value) + "[" + linear_of(shape, index) + "]";
  line(store + " = " + compute(value, index) + ";");
  close();
  close();
  close();
  close();
  close();
}

void KernelWriter::write_reduction_body(const Node& node, ValueId value, Index& index, const std::string& store) {
  const ValueId x = node.inputs[0];
  const Shape& in = graph_.type(x).shape;
  const Shape& out = graph_.type(value).shape;
  std::vector<bool> reduced(in.size(), false);
  for (int64_t axis : graph_.value(node.inputs[1]).constant->to_i64_vector()) {
    reduced[size_t(axis < 0 ? axis + int64_t(in.size()) : axis)] = true;
  }
  const bool keepdims = node.attrs.get_int("keepdims", 1) != 0;
  const bool sum = node.op == "ReduceSum";
  const std::string combine = node.op == "ReduceMax" ? "orchid_max" : "orchid_min";
  const std::vector<std::string> dims = dims_of(out, index);
  const std::string acc = fresh("acc");
  const std::string init = sum ? "0" : float_literal(node.op == "ReduceMax" ? -INFINITY : INFINITY);
  line(std::string(sum ? "double " : "float ") + acc + " = " + init + ";");
  // The innermost reduced axis of more than one element is chunked: the
  // elements' expression is computed into a small buffer by a loop GCC
  // vectorizes, then folded: sums in kLanes partial accumulators (also
  // vectorized), Max/Min by the prelude's explicitly vectorized orchid_fold.
  // Sums stay in double; their order differs from the interpreter's only by
  // double rounding, far below float's.
  size_t innermost = in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    if (reduced[d] && in[d] > 1) innermost = d;
  }
  Index element;
  element.has_dims = true;
  size_t kept = 0, loops = 0;
  std::string chunk_buffer, chunk_count, chunk_j;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!reduced[d]) {
      element.dims.push_back(dims[keepdims ? d : kept++]);
      continue;
    }
    if (keepdims) ++kept;
    if (in[d] == 1) {
      element.dims.push_back("0");
      continue;
    }
    const std::string r = fresh("r");
    if (d != innermost) {
      open("for (int64_t " + r + " = 0; " + r + " < " + std::to_string(in[d]) + "; ++" + r + ") {");
      ++loops;
      element.dims.push_back(r);
      continue;
    }
    const std::string base = r + "b";
    chunk_buffer = r + "buf";
    chunk_count = r + "n";
    chunk_j = r + "j";
    open("for (int64_t " + base + " = 0; " + base + " < " + std::to_string(in[d]) + "; " + base + " += " +
         std::to_string(kChunk) + ") {");
    line("const int64_t " + chunk_count + " = std::min<int64_t>(" + std::to_string(kChunk) + ", " +
         std::to_string(in[d]) + " - " + base + ");");
    line("float " + chunk_buffer + "[" + std::to_string(kChunk) + "];");
    open("for (int64_t " + chunk_j + " = 0; " + chunk_j + " < " + chunk_count + "; ++" + chunk_j + ") {");
    line("const int64_t " + r + " = " + base + " + " + chunk_j + ";");
    element.dims.push_back(r);
  }
  const std::string v = value_at(x, element);
  if (chunk_buffer.empty()) {
    line(sum ? acc + " += double(" + v + ");" : acc + " = " + combine + "(" + v + ", " + acc + ");");
  } else {
    line(chunk_buffer + "[" + chunk_j + "] = " + v + ";");
    close();
  }
  if (!chunk_buffer.empty() && !sum) {
    line(acc + " = orchid_fold<" + (node.op == "ReduceMax" ? "true" : "false") + ">(" + chunk_buffer + ", " +
         chunk_count + ", " + acc + ");");
    close();
  } else if (!chunk_buffer.empty()) {
    const std::string lanes = std::to_string(kLanes);
    const std::string part = chunk_buffer + "_part";
    line("double " + part + "[" + lanes + "] = {};");
    line("int64_t j = 0;");
    open("for (; j + " + lanes + " <= " + chunk_count + "; j += " + lanes + ") {");
    line("for (int l = 0; l < " + lanes + "; ++l) " + part + "[l] += double(" + chunk_buffer + "[j + l]);");
    close();
    line("for (; j < " + chunk_count + "; ++j) " + part + "[0] += double(" + chunk_buffer + "[j]);");
    line("for (int l = 0; l < " + lanes + "; ++l) " + acc + " += " + part + "[l];");
    close();
  }
  for (size_t k = 0; k < loops; ++k) close();
  line(store + " = float(" + acc + ");");
}

std::string KernelWriter::write(const std::string& symbol) {
  lines_.clear();
  scopes_.assign(1, {});
  local_decls_.clear();
  table_decls_.clear();
  tables_.clear();
  table_values_.clear();
  composed_.clear();
  table_reads_.clear();
  lines_.push_back("extern \"C\" void " + symbol + "(const void* const* inputs, void* const* outputs) {");
  declare_buffers();
  for (ValueId value : stages_) write_stage(value);
  lines_.insert(lines_.begin() + long(table_decls_at_), table_decls_.begin(), table_decls_.end());
  lines_.push_back("}");
  std::string text;
  for (const std::string& l : lines_) text += l + "\n";
  return text;
}

}  // namespace orchid::codegen::cpu::detail
