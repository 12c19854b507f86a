// Loop-invariant code motion (hoist.h).
#include "codegen/kernel_ir/hoist.h"

#include <set>

namespace orchid::codegen::kir {

namespace {

// What a statement changes: the variables it declares or assigns and the
// buffers or arrays it stores to, at any depth.
void collect_changes(const Stmt& s, std::set<std::string>& names) {
  switch (s.kind) {
    case StmtKind::Let: case StmtKind::Assign: case StmtKind::Fold: case StmtKind::Array: case StmtKind::Loop:
    case StmtKind::Store:
      names.insert(s.name);
      break;
    default: break;
  }
  for (const Stmt& inner : s.body) collect_changes(inner, names);
}

bool mentions(const Expr& e, const std::set<std::string>& names) {
  if ((e->op == Op::Var || e->op == Op::Load) && names.count(e->name)) return true;
  for (const Expr& arg : e->args) {
    if (mentions(arg, names)) return true;
  }
  return false;
}

// The lets of `loop`'s body that do not vary with it, removed from the body
// in their order.
Block hoist_from_loop(Stmt& loop) {
  // The loop's variable and what its body changes; the body's own
  // immutable lets count only if they stay (decided in order below).
  std::set<std::string> variant = {loop.name};
  for (const Stmt& s : loop.body) {
    if (s.kind != StmtKind::Let || s.is_mutable) collect_changes(s, variant);
  }
  Block hoisted, kept;
  for (Stmt& s : loop.body) {
    if (s.kind == StmtKind::Let && !s.is_mutable && !mentions(s.value, variant)) {
      hoisted.push_back(std::move(s));
    } else {
      if (s.kind == StmtKind::Let) variant.insert(s.name);
      kept.push_back(std::move(s));
    }
  }
  loop.body = std::move(kept);
  return hoisted;
}

}  // namespace

void hoist_invariants(Block& block) {
  for (size_t k = 0; k < block.size(); ++k) {
    hoist_invariants(block[k].body);
    if (block[k].kind != StmtKind::Loop) continue;
    Block hoisted = hoist_from_loop(block[k]);
    block.insert(block.begin() + long(k), std::make_move_iterator(hoisted.begin()),
                 std::make_move_iterator(hoisted.end()));
    k += hoisted.size();
  }
}

}  // namespace orchid::codegen::kir
