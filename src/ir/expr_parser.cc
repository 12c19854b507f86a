// Recursive-descent parser of the expr text form (grammar in expr_parser.h).
#include "ir/expr_parser.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

namespace orchid::expr {

namespace {

enum class TokenKind { Name, Int, Float, Punct, End };

struct Token {
  TokenKind kind;
  std::string_view text;
  int line;
  int column;
};

[[noreturn]] void fail_at(int line, int column, const std::string& message) {
  ORCHID_FAIL() << "expr parse error at line " << line << ", column " << column << ": " << message;
}

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    for (skip_space(); pos_ < text_.size(); skip_space()) tokens.push_back(token());
    tokens.push_back({TokenKind::End, "", line_, column()});
    return tokens;
  }

 private:
  int column() const { return static_cast<int>(pos_ - line_start_) + 1; }

  void skip_space() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == '\n') {
        ++pos_;
        ++line_;
        line_start_ = pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else {
        return;
      }
    }
  }

  size_t digits(size_t at) const {
    while (at < text_.size() && is_digit(text_[at])) ++at;
    return at;
  }

  Token token() {
    const size_t start = pos_;
    const int col = column();
    const char c = text_[pos_];
    TokenKind kind = TokenKind::Punct;
    if (is_name_start(c)) {
      kind = TokenKind::Name;
      while (pos_ < text_.size() && (is_name_start(text_[pos_]) || is_digit(text_[pos_]))) ++pos_;
    } else if (is_digit(c)) {
      kind = TokenKind::Int;
      pos_ = digits(pos_);
      if (pos_ + 1 < text_.size() && text_[pos_] == '.' && is_digit(text_[pos_ + 1])) {
        kind = TokenKind::Float;
        pos_ = digits(pos_ + 1);
      }
      if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
        size_t at = pos_ + 1;
        if (at < text_.size() && (text_[at] == '+' || text_[at] == '-')) ++at;
        if (at < text_.size() && is_digit(text_[at])) {
          kind = TokenKind::Float;
          pos_ = digits(at);
        }
      }
    } else if (std::string_view("<>[](){},:+-*/%").find(c) != std::string_view::npos) {
      ++pos_;
    } else {
      fail_at(line_, col, std::string("unexpected character '") + c + "'");
    }
    return {kind, text_.substr(start, pos_ - start), line_, col};
  }

  std::string_view text_;
  size_t pos_ = 0;
  size_t line_start_ = 0;
  int line_ = 1;
};

using Frame = std::map<std::string, Expr, std::less<>>;

class Parser {
 public:
  Parser(std::string_view text, const TensorTable& tensors, bool open)
      : tokens_(Lexer(text).run()), tensors_(tensors), open_(open) {}

  Expr program() {
    while (at_name("tensor")) declaration();
    Expr e = at_scope() ? scope() : sum();
    if (peek().kind != TokenKind::End) fail(peek(), "unexpected " + describe(peek()) + " after the expression");
    return e;
  }

 private:
  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& next() {
    const Token& t = peek();
    if (pos_ < tokens_.size() - 1) ++pos_;
    return t;
  }
  bool at_punct(char c, size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == TokenKind::Punct && t.text[0] == c;
  }
  bool at_name(std::string_view word, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::Name && peek(ahead).text == word;
  }
  bool at_scope() const { return at_name("L") && at_punct('<', 1); }

  static std::string describe(const Token& t) {
    if (t.kind == TokenKind::End) return "end of input";
    // Built with append: g++ 12 warns falsely (-Wrestrict) on "'" + string.
    std::string quoted = "'";
    quoted.append(t.text).append("'");
    return quoted;
  }
  [[noreturn]] static void fail(const Token& at, const std::string& message) { fail_at(at.line, at.column, message); }

  const Token& expect_punct(char c) {
    if (!at_punct(c)) fail(peek(), std::string("expected '") + c + "' but found " + describe(peek()));
    return next();
  }

  const Token& expect_name(const char* what) {
    if (peek().kind != TokenKind::Name)
      fail(peek(), std::string("expected ") + what + " but found " + describe(peek()));
    if (!is_valid_name(peek().text)) fail(peek(), "'" + std::string(peek().text) + "' is a reserved word");
    return next();
  }

  int64_t expect_int(bool allow_sign) {
    const Token& start = peek();
    const bool negative = allow_sign && at_punct('-');
    if (negative) next();
    const Token& t = peek();
    if (t.kind != TokenKind::Int) fail(t, "expected an integer but found " + describe(t));
    next();
    const int64_t v = int_value(t);
    if (negative && v == std::numeric_limits<int64_t>::min()) fail(start, "integer out of range");
    return negative ? -v : v;
  }

  static int64_t int_value(const Token& t) {
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || ptr != t.text.data() + t.text.size()) fail(t, "integer literal out of range");
    return v;
  }

  std::vector<int64_t> int_list() {
    std::vector<int64_t> values;
    expect_punct('[');
    if (!at_punct(']')) {
      values.push_back(expect_int(true));
      while (at_punct(',')) {
        next();
        values.push_back(expect_int(true));
      }
    }
    expect_punct(']');
    return values;
  }

  void declaration();
  Expr scope();
  std::vector<IterRange> ranges(std::vector<int64_t>* pads);
  Expr sum();
  Expr product();
  Expr unary();
  Expr primary();
  Expr name_primary(const Token& name);
  Expr iterator(const Token& name);
  Expr subscript(const Token& at, Expr source);

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  TensorTable tensors_;
  bool open_;
  std::vector<Frame> frames_;  // iterators of the enclosing scopes; only the innermost is visible
};

void Parser::declaration() {
  next();  // 'tensor'
  const Token& name = expect_name("a tensor name");
  std::vector<int64_t> shape = int_list();
  std::vector<int64_t> pads;
  if (at_name("pad")) {
    next();
    pads = int_list();
  }
  if (std::string error = tensor_error(name.text, shape, pads); !error.empty()) fail(name, error);
  Expr t = tensor(name.text, std::move(shape), std::move(pads));
  auto [it, inserted] = tensors_.emplace(std::string(name.text), t);
  if (!inserted && it->second != t) {
    fail(name, "tensor '" + std::string(name.text) + "' redeclared with a different shape or padding");
  }
}

std::vector<IterRange> Parser::ranges(std::vector<int64_t>* pads) {
  std::vector<IterRange> out;
  if (at_punct('>')) return out;
  while (true) {
    const Token& name = expect_name("an iterator name");
    expect_punct(':');
    const int64_t lo = expect_int(true);
    expect_punct(':');
    const int64_t hi = expect_int(true);
    if (lo > hi) fail(name, "range of iterator '" + std::string(name.text) + "' has lo > hi");
    for (const IterRange& r : out) {
      if (r.name() == name.text) fail(name, "iterator '" + std::string(name.text) + "' declared twice");
    }
    int64_t pad = 0;
    if (at_name("pad")) {
      if (pads == nullptr) fail(peek(), "padding can be declared on loop iterators only");
      next();
      pad = expect_int(false);
    }
    out.push_back({iter(name.text), lo, hi});
    if (pads != nullptr) pads->push_back(pad);
    if (!at_punct(',')) return out;
    next();
  }
}

Expr Parser::scope() {
  const Token& start = next();  // 'L'
  expect_punct('<');
  std::vector<int64_t> pads;
  std::vector<IterRange> loops = ranges(&pads);
  expect_punct('>');
  std::vector<IterRange> sums;
  if (at_name("Sum") && at_punct('<', 1)) {
    next();
    next();
    sums = ranges(nullptr);
    expect_punct('>');
  }
  Frame frame;
  for (const auto* list : {&loops, &sums}) {
    for (const IterRange& r : *list) {
      if (!frame.emplace(r.name(), r.iter).second) fail(start, "iterator '" + r.name() + "' declared twice");
    }
  }
  frames_.push_back(std::move(frame));
  Expr body = sum();
  frames_.pop_back();
  if (std::string error = scope_error(loops, sums, body, pads); !error.empty()) fail(start, error);
  return expr::scope(std::move(loops), std::move(sums), body, std::move(pads));
}

Expr Parser::sum() {
  Expr lhs = product();
  while (at_punct('+') || at_punct('-')) {
    const bool plus = next().text[0] == '+';
    Expr rhs = product();
    lhs = plus ? add(lhs, rhs) : sub(lhs, rhs);
  }
  return lhs;
}

Expr Parser::product() {
  Expr lhs = unary();
  while (at_punct('*') || at_punct('/') || at_punct('%')) {
    const Token& op = next();
    Expr rhs = unary();
    if (op.text[0] == '*') {
      lhs = mul(lhs, rhs);
    } else if (op.text[0] == '/') {
      if (std::string error = div_error(lhs, rhs); !error.empty()) fail(op, error);
      lhs = div(lhs, rhs);
    } else {
      if (std::string error = mod_error(lhs, rhs); !error.empty()) fail(op, error);
      lhs = mod(lhs, rhs);
    }
  }
  return lhs;
}

Expr Parser::unary() {
  if (at_punct('-')) {
    next();
    return neg(unary());
  }
  return primary();
}

Expr Parser::primary() {
  const Token& t = peek();
  switch (t.kind) {
    case TokenKind::Int: next(); return integer(int_value(t));
    case TokenKind::Float: {
      next();
      double v = 0;
      auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
      if (ec != std::errc() || ptr != t.text.data() + t.text.size()) fail(t, "float literal out of range");
      return constant(v);
    }
    case TokenKind::Name: next(); return name_primary(t);
    case TokenKind::End: fail(t, "expected an expression but found end of input");
    case TokenKind::Punct: break;
  }
  if (at_punct('(')) {
    next();
    Expr e = sum();
    expect_punct(')');
    return e;
  }
  if (at_punct('{')) {
    next();
    if (!at_scope()) fail(peek(), "expected a scope 'L<...>' after '{'");
    Expr inner = scope();
    expect_punct('}');
    if (!at_punct('[')) fail(peek(), "a nested scope must be subscripted: expected '['");
    return subscript(t, inner);
  }
  fail(t, "expected an expression but found " + describe(t));
}

Expr Parser::name_primary(const Token& name) {
  if (at_punct('(')) {
    const std::optional<Func> func = func_from_name(name.text);
    if (!func) fail(name, "unknown function '" + std::string(name.text) + "'");
    next();
    Expr arg = sum();
    expect_punct(')');
    return call(*func, arg);
  }
  if (at_punct('[')) {
    auto it = tensors_.find(name.text);
    if (it == tensors_.end()) {
      fail(name,
           "unknown tensor '" + std::string(name.text) + "' (declare it: tensor " + std::string(name.text) + "[dims])");
    }
    return subscript(name, it->second);
  }
  if (name.text == "inf") return constant(std::numeric_limits<double>::infinity());
  if (name.text == "nan") return constant(std::numeric_limits<double>::quiet_NaN());
  return iterator(name);
}

Expr Parser::iterator(const Token& name) {
  if (!is_valid_name(name.text)) fail(name, "'" + std::string(name.text) + "' is a reserved word");
  if (frames_.empty()) {
    if (open_) return iter(name.text);
    fail(name, "'" + std::string(name.text) + "' is not an iterator: no enclosing scope binds it");
  }
  auto it = frames_.back().find(name.text);
  if (it == frames_.back().end()) {
    fail(name, "iterator '" + std::string(name.text) + "' is not bound by the enclosing scope (scopes are closed)");
  }
  return it->second;
}

Expr Parser::subscript(const Token& at, Expr source) {
  expect_punct('[');
  std::vector<Expr> indices;
  if (!at_punct(']')) {
    indices.push_back(sum());
    while (at_punct(',')) {
      next();
      indices.push_back(sum());
    }
  }
  expect_punct(']');
  if (std::string error = access_error(source, indices); !error.empty()) fail(at, error);
  return access(source, std::move(indices));
}

}  // namespace

Expr parse(std::string_view text, const TensorTable& tensors) { return Parser(text, tensors, false).program(); }

Expr parse_open(std::string_view text, const TensorTable& tensors) { return Parser(text, tensors, true).program(); }

}  // namespace orchid::expr
