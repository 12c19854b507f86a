// Text form of the kernel IR (printer.h).
#include "codegen/kernel_ir/printer.h"

namespace orchid::codegen::kir {

namespace {

// Tables longer than this print their first values and their length.
constexpr size_t kTableValuesShown = 16;

const char* buffer_kind(BufferKind kind) {
  switch (kind) {
    case BufferKind::Input: return "input";
    case BufferKind::Output: return "output";
    case BufferKind::Scratch: return "scratch";
    case BufferKind::Table: return "table";
  }
  return "?";
}

std::string print_buffer(const Buffer& b) {
  std::string text = b.name + ": " + type_name(b.type) + "[" + std::to_string(b.size) + "] " + buffer_kind(b.kind);
  if (b.kind == BufferKind::Input || b.kind == BufferKind::Output) text += " " + std::to_string(b.position);
  if (b.kind == BufferKind::Table) {
    text += " {";
    for (size_t k = 0; k < b.values.size() && k < kTableValuesShown; ++k) {
      text += (k ? ", " : "") + std::to_string(b.values[k]);
    }
    if (b.values.size() > kTableValuesShown) text += ", ...";
    text += "}";
  }
  return text;
}

void print_stmt(const Stmt& s, int depth, std::string& out) {
  const std::string pad(size_t(2 * depth), ' ');
  switch (s.kind) {
    case StmtKind::Block:
      out += pad + "block \"" + s.label + "\":\n" + print(s.body, depth + 1);
      return;
    case StmtKind::Region:
      out += pad + "region \"" + s.label + "\" " + (s.parallel ? "parallel" : "serial") + " (work " +
             std::to_string(s.work) + "):\n" + print(s.body, depth + 1);
      return;
    case StmtKind::Loop:
      out += pad + "for " + s.name + " in [" + to_string(s.begin) + ", " + to_string(s.end) + ")" +
             (s.step != 1 ? " step " + std::to_string(s.step) : "") +
             (s.role == LoopRole::Shared ? " shared" : "") + ":\n" + print(s.body, depth + 1);
      return;
    case StmtKind::Let:
      out += pad + (s.is_mutable ? "var " : "let ") + s.name + ": " + type_name(s.type) + " = " + to_string(s.value) +
             "\n";
      return;
    case StmtKind::Assign: out += pad + s.name + " = " + to_string(s.value) + "\n"; return;
    case StmtKind::Store:
      out += pad + s.name + "[" + to_string(s.index) + "] = " + to_string(s.value) + "\n";
      return;
    case StmtKind::Array:
      out += pad + "array " + s.name + ": " + type_name(s.type) + "[" + std::to_string(s.size) + "]\n";
      return;
    case StmtKind::Fold:
      out += pad + s.name + " = fold " + reduce_name(s.reduce) + " " + s.array + "[" + to_string(s.index) + ", " +
             to_string(add(s.index, s.value)) + ") into " + s.name + "\n";
      return;
  }
}

}  // namespace

std::string print(const Block& block, int depth) {
  std::string out;
  for (const Stmt& s : block) print_stmt(s, depth, out);
  return out;
}

std::string print(const Kernel& kernel) {
  std::string out = "kernel " + kernel.name + "\n";
  for (const Buffer& b : kernel.buffers) out += "  " + print_buffer(b) + "\n";
  return out + print(kernel.body, 0);
}

}  // namespace orchid::codegen::kir
