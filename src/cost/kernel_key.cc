#include "cost/kernel_key.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <sstream>

#include "codegen/cpu/emitter.h"
#include "support/version.h"

namespace orchid::cost {

namespace {

// Bumped when the profiler measures differently (2: native-layout outputs,
// 3: packed weights out of cache).
constexpr int kProfileVersion = 3;

// Constants with at most this many elements are hashed by value: they are
// indices, pads and shapes that decide the work. Larger ones are weights,
// whose values do not change the running time.
constexpr int64_t kSmallConstantElements = 64;

// 64-bit FNV-1a from a given offset basis: stable across builds, platforms
// and standard libraries, unlike std::hash.
uint64_t fnv1a(const std::string& text, uint64_t basis) {
  uint64_t hash = basis;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// 128 bits of hash as 32 hex digits: two FNV-1a passes with different bases
// make an accidental collision between two kernels negligible.
std::string hex_hash(const std::string& text) {
  char buffer[33];
  std::snprintf(buffer, sizeof buffer, "%016llx%016llx",
                static_cast<unsigned long long>(fnv1a(text, 0xcbf29ce484222325ull)),
                static_cast<unsigned long long>(fnv1a(text, 0x84222325cbf29ce4ull)));
  return buffer;
}

// Doubles printed exactly, so that equal attributes give equal text.
std::string exact(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

void write_tensor(std::ostream& out, const Tensor& tensor) {
  out << tensor.type().to_string();
  if (tensor.numel() > kSmallConstantElements) return;
  out << "{";
  for (int64_t i = 0; i < tensor.numel(); ++i) out << (i ? "," : "") << exact(tensor.at_f64(i));
  out << "}";
}

template <typename T>
void write_list(std::ostream& out, const std::vector<T>& values) {
  out << "[";
  for (size_t i = 0; i < values.size(); ++i) {
    out << (i ? "," : "");
    if constexpr (std::is_same_v<T, double>) {
      out << exact(values[i]);
    } else {
      out << values[i];
    }
  }
  out << "]";
}

void write_attribute(std::ostream& out, const AttributeValue& value) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          out << "i" << v;
        } else if constexpr (std::is_same_v<T, double>) {
          out << "f" << exact(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          out << "s" << v.size() << ":" << v;
        } else if constexpr (std::is_same_v<T, Tensor>) {
          out << "t";
          write_tensor(out, v);
        } else {
          write_list(out, v);
        }
      },
      value);
}

// Local names for the group's values: external inputs by their position in
// group.inputs ("i0", "i1", ...), values produced inside by first
// appearance ("v0", ...), so that the same layer in two graphs (or two
// places of one graph) gets the same text.
class LocalNames {
 public:
  explicit LocalNames(const runtime::KernelGroup& group) {
    for (size_t k = 0; k < group.inputs.size(); ++k) names_.emplace(group.inputs[k], "i" + std::to_string(k));
  }
  const std::string& operator()(ValueId id) {
    auto it = names_.find(id);
    if (it == names_.end()) it = names_.emplace(id, "v" + std::to_string(next_++)).first;
    return it->second;
  }

 private:
  std::map<ValueId, std::string> names_;
  int next_ = 0;
};

void write_value(std::ostream& out, const Graph& graph, ValueId id, LocalNames& names) {
  if (id == kNoValue) {
    out << "_";
    return;
  }
  out << names(id) << ":" << graph.type(id).to_string();
}

void write_node(std::ostream& out, const Graph& graph, const Node& node, LocalNames& names) {
  out << "node " << node.domain << "::" << node.op << " (";
  for (ValueId id : node.inputs) {
    write_value(out, graph, id, names);
    out << " ";
  }
  out << ") -> (";
  for (ValueId id : node.outputs) {
    write_value(out, graph, id, names);
    out << " ";
  }
  out << ")";
  for (const auto& [name, value] : node.attrs.all()) {  // std::map: sorted by name
    out << " " << name << "=";
    write_attribute(out, value);
  }
  out << "\n";
}

// The canonical text the key hashes: everything that decides the running
// time, nothing that only names things.
std::string canonical_text(const Graph& graph, const runtime::KernelGroup& group) {
  std::ostringstream out;
  out << "orchid " << kVersion << " profile " << kProfileVersion << "\n";
  if (group.symbol.empty()) {
    out << "library" << (group.variant.empty() ? "" : " " + group.variant) << "\n";
  } else {
    // The code itself: a generator change re-measures the kernels it changes.
    out << "generated\n";
    if (codegen::cpu::can_generate(graph, group)) out << codegen::cpu::code_identity(graph, group) << "\n";
  }
  LocalNames names(group);
  out << "inputs";
  for (size_t k = 0; k < group.inputs.size(); ++k) {
    const Value& value = graph.value(group.inputs[k]);
    out << " i" << k << ":";
    if (value.constant) {
      out << "const ";
      write_tensor(out, *value.constant);
    } else {
      out << value.type.to_string();
    }
  }
  out << "\n";
  for (size_t index : group.nodes) write_node(out, graph, graph.nodes().at(index), names);
  out << "outputs";
  for (ValueId id : group.outputs) out << " " << names(id);
  out << "\n";
  return out.str();
}

}  // namespace

std::string kernel_key(const Graph& graph, const runtime::KernelGroup& group) {
  return hex_hash(canonical_text(graph, group));
}

}  // namespace orchid::cost
