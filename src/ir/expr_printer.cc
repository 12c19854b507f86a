// Printer of the expr text form. Parentheses follow the parser's precedence
// (additive < multiplicative < unary minus < atoms, all left associative), so
// the printed text parses back to the same tree.
#include "ir/expr_printer.h"

#include <charconv>
#include <cmath>
#include <set>

#include "ir/expr_utils.h"

namespace orchid::expr {

namespace {

enum Precedence : int { kAdditive = 1, kMultiplicative = 2, kUnary = 3, kAtom = 4 };

// Shortest text that reads back to the same double, always marked as a float
// literal (an integer literal would be an index constant).
std::string format_double(double v) {
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, result.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";  // 'n': inf, nan
  return s;
}

int precedence(Expr e) {
  switch (e->kind()) {
    case NodeKind::Const: return std::signbit(e->as<ConstNode>().value()) ? kUnary : kAtom;
    case NodeKind::Affine: {
      const auto& a = e->as<AffineNode>();
      const size_t parts = a.terms().size() + (a.constant() != 0 ? 1 : 0);
      if (a.terms().empty()) return a.constant() < 0 ? kUnary : kAtom;
      if (parts > 1) return kAdditive;
      return a.terms()[0].coef == -1 ? kUnary : kMultiplicative;
    }
    case NodeKind::FloorDiv:
    case NodeKind::Mod: return kMultiplicative;
    case NodeKind::Binary: {
      const BinaryOp op = e->as<BinaryNode>().op();
      return op == BinaryOp::Add || op == BinaryOp::Sub ? kAdditive : kMultiplicative;
    }
    default: return kAtom;
  }
}

class Printer {
 public:
  std::string out;

  void expr(Expr e) {
    switch (e->kind()) {
      case NodeKind::Const: out += format_double(e->as<ConstNode>().value()); break;
      case NodeKind::Iter: out += e->as<IterNode>().name(); break;
      case NodeKind::Affine: affine(e->as<AffineNode>()); break;
      case NodeKind::FloorDiv:
      case NodeKind::Mod: divmod(e->as<DivModNode>()); break;
      case NodeKind::Binary: binary(e->as<BinaryNode>()); break;
      case NodeKind::Call:
        out += func_info(e->as<CallNode>().func()).name;
        out += '(';
        expr(e->as<CallNode>().arg());
        out += ')';
        break;
      case NodeKind::Tensor: out += e->as<TensorNode>().name(); break;
      case NodeKind::Access: access(e->as<AccessNode>()); break;
      case NodeKind::Scope: scope(e->as<ScopeNode>()); break;
    }
  }

 private:
  void operand(Expr e, int min_precedence) {
    const bool parens = precedence(e) < min_precedence;
    if (parens) out += '(';
    expr(e);
    if (parens) out += ')';
  }

  // A term prints as [sign][|coef|*]atom; a div/mod atom behind a prefix gets
  // parentheses, since `-h / 2` would read as (-h) / 2 and `2*h / 2` as (2*h) / 2.
  void affine(const AffineNode& a) {
    bool first = true;
    for (const AffineTerm& t : a.terms()) {
      int64_t magnitude = t.coef;
      if (first) {
        if (t.coef < 0) out += '-';
      } else {
        out += t.coef < 0 ? " - " : " + ";
      }
      if (t.coef < 0) magnitude = -t.coef;
      bool prefixed = first && t.coef < 0;
      if (magnitude != 1) {
        out += std::to_string(magnitude) + "*";
        prefixed = true;
      }
      operand(t.atom, prefixed ? kAtom : kMultiplicative);
      first = false;
    }
    if (first) {
      out += std::to_string(a.constant());
    } else if (a.constant() != 0) {
      out += a.constant() < 0 ? " - " : " + ";
      out += std::to_string(a.constant() < 0 ? -a.constant() : a.constant());
    }
  }

  void divmod(const DivModNode& d) {
    operand(d.operand(), kAtom);
    out += d.kind() == NodeKind::Mod ? " % " : " / ";
    out += std::to_string(d.divisor());
  }

  void binary(const BinaryNode& b) {
    const int p = precedence(&b);
    operand(b.lhs(), p);
    out += ' ';
    out += binary_op_symbol(b.op());
    out += ' ';
    operand(b.rhs(), p + 1);  // left associative: a right operand at p needs parentheses
  }

  void access(const AccessNode& a) {
    if (a.source()->is<ScopeNode>()) {
      out += "{ ";
      expr(a.source());
      out += " }";
    } else {
      out += a.source()->as<TensorNode>().name();
    }
    out += '[';
    for (size_t i = 0; i < a.indices().size(); ++i) {
      if (i > 0) out += ", ";
      expr(a.indices()[i]);
    }
    out += ']';
  }

  void ranges(const std::vector<IterRange>& list, const std::vector<int64_t>* pads) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (i > 0) out += ", ";
      out += list[i].name() + ":" + std::to_string(list[i].lo) + ":" + std::to_string(list[i].hi);
      if (pads != nullptr && (*pads)[i] != 0) out += " pad " + std::to_string((*pads)[i]);
    }
  }

  void scope(const ScopeNode& s) {
    out += "L<";
    ranges(s.loops(), &s.pads());
    out += ">";
    if (!s.sums().empty()) {
      out += " Sum<";
      ranges(s.sums(), nullptr);
      out += ">";
    }
    out += ' ';
    expr(s.body());
  }
};

std::string int_list(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(values[i]);
  }
  return s + "]";
}

}  // namespace

std::string to_string(Expr e) {
  ORCHID_CHECK(e != nullptr) << "printing a null expr";
  Printer p;
  p.expr(e);
  return p.out;
}

std::string print_program(Expr e) {
  std::string out;
  std::set<std::string> names;
  for (Expr t : free_tensors(e)) {
    const auto& tensor = t->as<TensorNode>();
    ORCHID_CHECK(names.insert(tensor.name()).second)
        << "two different tensors named '" << tensor.name() << "' cannot be printed as one program";
    out += "tensor " + tensor.name() + int_list(tensor.shape());
    bool padded = false;
    for (int64_t p : tensor.pads()) padded = padded || p != 0;
    if (padded) out += " pad " + int_list(tensor.pads());
    out += '\n';
  }
  return out + to_string(e);
}

}  // namespace orchid::expr
