// The kernel IR: one generated kernel as data. A kernel is its buffers
// (inputs, outputs, per-call scratch, constant index tables) and a body of
// statements: loop nests whose schedule is explicit (which loop is shared
// among threads, where a region runs in parallel, chunks, tiles, split inner
// ranges), with scalar expressions as trees of loads, calls and selects.
// Lowering (codegen/cpu/lower_*.cc) builds it from a KernelGroup; passes
// (hoist.h) rewrite it; the printer (printer.h) writes it as text for golden
// tests; a target's renderer (codegen/cpu/render.h) writes code.
//
// Expressions are immutable and shared (an Expr is a pointer to a const
// node). The constructors fold integer literals, so index arithmetic of the
// common cases (start 0, step 1, stride 1) disappears.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace orchid::codegen::kir {

// Scalar types: indices, the float data, double accumulators, masks.
enum class Type : uint8_t { I64, F32, F64, Bool };
const char* type_name(Type type);

enum class Op : uint8_t {
  Const,  // i (I64, Bool) or f (F32, F64)
  Var,    // name
  Load,   // name[args[0]]
  // Arithmetic, on I64 or floats. Min/Max on floats propagate NaN like the
  // interpreter; Div/Mod on I64 truncate (indices are never negative).
  Add, Sub, Mul, Div, Mod, Neg, Min, Max,
  // Comparisons and logic, Bool results.
  Lt, Le, Gt, Ge, Eq, Ne, And, Or, Not,
  Select,  // args[0] ? args[1] : args[2], only the chosen one evaluated
  Cast,    // args[0] converted to `type`
  Call,    // a scalar function of floats, by its ONNX name (Exp, Sigmoid, Pow, ...)
};

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ExprNode {
  Op op = Op::Const;
  Type type = Type::I64;
  int64_t i = 0;     // Const of I64 or Bool
  double f = 0;      // Const of F32 or F64
  std::string name;  // Var: the variable; Load: the buffer; Call: the function
  std::vector<Expr> args;
};

// ---- Constructors
Expr int_const(int64_t value);
Expr float_const(double value, Type type = Type::F32);
Expr bool_const(bool value);
Expr var(const std::string& name, Type type = Type::I64);
Expr load(const std::string& buffer, Type type, Expr index);
Expr call(const std::string& function, Type type, std::vector<Expr> args);
Expr select(Expr condition, Expr if_true, Expr if_false);
Expr cast(Type type, Expr value);
// Binary operations; comparisons and logic are Bool, arithmetic takes a's type.
Expr binary(Op op, Expr a, Expr b);
Expr unary(Op op, Expr a);

// Index arithmetic on I64, folding literals: x + 0, x * 1, (x + 2) + 3.
Expr add(Expr a, Expr b);
Expr add(Expr a, int64_t c);
Expr mul(Expr a, int64_t c);
Expr div(Expr a, int64_t c);
Expr mod(Expr a, int64_t c);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
// min(max(a, low), high): a clamped into [low, high].
Expr clamp(Expr a, int64_t low, int64_t high);

bool is_int_const(const Expr& e, int64_t* value = nullptr);
bool is_const(const Expr& e);
bool is_var(const Expr& e, const std::string& name = "");

// The C-like infix spelling of a binary operation (" + ", " < ", " && ",
// ...), or nullptr for operations written as calls.
const char* infix(Op op);

// The expression as one line of text (the printer's form), also a key for
// common-subexpression elimination.
std::string to_string(const Expr& e);

// ---- Statements
enum class StmtKind : uint8_t {
  Block,   // body, optionally labelled (a stage, one part of a stage)
  Region,  // a stage's body: run by a thread team when `parallel`, else serially
  Loop,    // for name in [begin, end) step `step`: body
  Let,     // const `type` name = value (mutable: a variable assigned later)
  Assign,  // name = value
  Store,   // name[index] = value
  Array,   // a local array: `type` name[size]
  Fold,    // name = fold(reduce, array[index, index + count)) combined with name
};

// Who runs a loop's iterations: one thread, or the region's team, shared.
enum class LoopRole : uint8_t { Serial, Shared };

// How a Fold combines.
enum class Reduce : uint8_t { Sum, Max, Min };
const char* reduce_name(Reduce reduce);

struct Stmt {
  StmtKind kind = StmtKind::Block;
  std::string name;  // Loop: its variable; Let/Assign/Fold: the variable; Store/Array: the buffer
  std::string label;  // Block/Region: what it computes (a comment)
  Type type = Type::I64;
  bool is_mutable = false;  // Let
  Expr value;               // Let, Assign, Store; Fold: the count
  Expr index;               // Store; Fold: the first element folded
  Expr begin, end;          // Loop
  int64_t step = 1;         // Loop
  LoopRole role = LoopRole::Serial;
  bool parallel = false;    // Region
  int64_t work = 0;         // Region: element operations (why it is parallel or not)
  int64_t size = 0;         // Array
  Reduce reduce = Reduce::Sum;  // Fold
  std::string array;            // Fold: the array or buffer folded
  std::vector<Stmt> body;       // Block, Region, Loop
};
using Block = std::vector<Stmt>;

Stmt let_stmt(const std::string& name, Type type, Expr value, bool is_mutable = false);
Stmt assign_stmt(const std::string& name, Expr value);
Stmt store_stmt(const std::string& buffer, Expr index, Expr value);
Stmt loop_stmt(const std::string& var, Expr begin, Expr end, int64_t step = 1, LoopRole role = LoopRole::Serial);
Stmt array_stmt(const std::string& name, Type type, int64_t size);
// A fold of array[first, first + count): a chunk array (first 0) or a
// contiguous range of a buffer, read in place.
Stmt fold_stmt(const std::string& acc, Reduce reduce, const std::string& array, Expr count,
               Expr first = int_const(0));
Stmt block_stmt(const std::string& label);
Stmt region_stmt(const std::string& label, bool parallel, int64_t work);

// Reads and writes of buffer `from` in `block` become reads and writes of
// `to` at the index minus `shift` (a stored value contracted to a per-row
// array).
void relocate_buffer(Block& block, const std::string& from, const std::string& to, const Expr& shift);

// The buffers and local arrays `block` reads (loads, folded arrays) and
// writes (stores), nested statements included; and whether it holds a loop.
struct MemoryAccess {
  std::set<std::string> reads, writes;
};
MemoryAccess memory_access(const Block& block);
bool contains_loop(const Block& block);

// ---- Kernels
enum class BufferKind : uint8_t { Input, Output, Scratch, Table };

struct Buffer {
  std::string name;
  BufferKind kind = BufferKind::Input;
  Type type = Type::F32;
  int64_t size = 0;             // elements
  size_t position = 0;          // Input/Output: the argument's position
  std::vector<int64_t> values;  // Table: its constant values (I64)
};

struct Kernel {
  std::string name;  // what it computes (a comment)
  std::vector<Buffer> buffers;
  Block body;

  const Buffer* buffer(const std::string& name) const;
};

}  // namespace orchid::codegen::kir
