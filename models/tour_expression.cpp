#include "tour_expression.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace attnlab {

namespace {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

bool isNumberText(const std::string& s, double& value) {
  if (s.empty()) return false;
  char* end = nullptr;
  value = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

}  // namespace

std::string TourCall::key() const {
  if (args.empty()) return name;
  std::string k = name + "(";
  for (size_t i = 0; i < args.size(); ++i) k += (i ? "," : "") + args[i];
  return k + ")";
}

double TourCall::numberArg(size_t i) const {
  double v = kUnknown;
  if (i >= args.size() || !isNumberText(args[i], v)) return kUnknown;
  return v;
}

struct TourExpression::Node {
  enum class Kind { Number, Call, Negate, Not, Binary } kind = Kind::Number;
  double number = 0;
  std::string key;  // Call
  std::string op;   // Binary: + - * / < <= > >= == != and or
  std::shared_ptr<const Node> a, b;

  double eval(const TourNumbers& numbers) const {
    switch (kind) {
      case Kind::Number: return number;
      case Kind::Call: {
        const auto it = numbers.find(key);
        return it == numbers.end() ? kUnknown : it->second;
      }
      case Kind::Negate: return -a->eval(numbers);
      case Kind::Not: {
        const double x = a->eval(numbers);
        return std::isnan(x) ? kUnknown : (x == 0 ? 1 : 0);
      }
      case Kind::Binary: break;
    }
    const double x = a->eval(numbers), y = b->eval(numbers);
    if (std::isnan(x) || std::isnan(y)) return kUnknown;  // an unknown number decides nothing
    if (op == "+") return x + y;
    if (op == "-") return x - y;
    if (op == "*") return x * y;
    if (op == "/") return x / y;
    if (op == "<") return x < y;
    if (op == "<=") return x <= y;
    if (op == ">") return x > y;
    if (op == ">=") return x >= y;
    if (op == "==") return x == y;
    if (op == "!=") return x != y;
    if (op == "and") return x != 0 && y != 0;
    return x != 0 || y != 0;  // or
  }
};

namespace {

using Node = TourExpression::Node;
using NodePtr = std::shared_ptr<const Node>;

// Recursive descent over the grammar
//   or := and ("or" and)*      and := not ("and" not)*      not := "not" not | cmp
//   cmp := sum (relop sum)?    sum := prod (("+"|"-") prod)*  prod := unary (("*"|"/") unary)*
//   unary := "-" unary | atom  atom := number | call | "(" or ")"
class Parser {
 public:
  Parser(const std::string& text, const std::function<std::string(const TourCall&)>& known, std::vector<TourCall>& calls)
      : s_(text), known_(known), calls_(calls) {}

  NodePtr parseAll() {
    NodePtr n = parseOr();
    skipSpace();
    if (!failed() && pos_ < s_.size()) fail("unexpected '" + s_.substr(pos_, 1) + "'");
    return n;
  }
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  void fail(const std::string& why) {
    if (error_.empty()) error_ = "at column " + std::to_string(pos_ + 1) + ": " + why;
  }
  void skipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool accept(const std::string& token) {
    skipSpace();
    if (s_.compare(pos_, token.size(), token) != 0) return false;
    // Word operators must not be a prefix of a longer name ("order" is not "or" + "der").
    const bool word = std::isalpha(static_cast<unsigned char>(token[0]));
    const size_t after = pos_ + token.size();
    if (word && after < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[after])) || s_[after] == '_')) return false;
    pos_ = after;
    return true;
  }
  static NodePtr binary(const std::string& op, NodePtr a, NodePtr b) {
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::Binary;
    n->op = op;
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
  }
  static NodePtr unary(Node::Kind kind, NodePtr a) {
    auto n = std::make_shared<Node>();
    n->kind = kind;
    n->a = std::move(a);
    return n;
  }

  NodePtr parseOr() {
    NodePtr n = parseAnd();
    while (!failed() && (accept("or") || accept("||"))) n = binary("or", n, parseAnd());
    return n;
  }
  NodePtr parseAnd() {
    NodePtr n = parseNot();
    while (!failed() && (accept("and") || accept("&&"))) n = binary("and", n, parseNot());
    return n;
  }
  // Each "(", "not", "!" and "-" nests a level; parsing, evaluating and freeing the tree recurse once
  // per level, so a hostile tour's 100,000 of them would overflow the stack.
  static constexpr int kMaxDepth = 64;
  struct Level {
    int& depth;
    explicit Level(int& d) : depth(++d) {}
    ~Level() { --depth; }
  };
  bool tooDeep() {
    if (depth_ > kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    return failed();
  }

  NodePtr parseNot() {
    Level level(depth_);
    if (tooDeep()) return std::make_shared<Node>();
    if (accept("not")) return unary(Node::Kind::Not, parseNot());
    skipSpace();
    if (s_.compare(pos_, 2, "!=") != 0 && accept("!")) return unary(Node::Kind::Not, parseNot());
    return parseComparison();
  }
  NodePtr parseComparison() {
    NodePtr n = parseSum();
    for (const char* op : {"<=", ">=", "==", "!=", "<", ">"})
      if (!failed() && accept(op)) return binary(op, n, parseSum());
    return n;
  }
  NodePtr parseSum() {
    NodePtr n = parseProduct();
    while (!failed()) {
      if (accept("+")) n = binary("+", n, parseProduct());
      else if (accept("-")) n = binary("-", n, parseProduct());
      else break;
    }
    return n;
  }
  NodePtr parseProduct() {
    NodePtr n = parseUnary();
    while (!failed()) {
      if (accept("*")) n = binary("*", n, parseUnary());
      else if (accept("/")) n = binary("/", n, parseUnary());
      else break;
    }
    return n;
  }
  NodePtr parseUnary() {
    Level level(depth_);
    if (tooDeep()) return std::make_shared<Node>();
    if (accept("-")) return unary(Node::Kind::Negate, parseUnary());
    return parseAtom();
  }
  NodePtr parseAtom() {
    skipSpace();
    auto n = std::make_shared<Node>();
    if (failed()) return n;
    if (pos_ >= s_.size()) {
      fail("expected a number or a name");
      return n;
    }
    if (accept("(")) {
      NodePtr inner = parseOr();
      if (!accept(")")) fail("expected ')'");
      return inner;
    }
    const char c = s_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      char* end = nullptr;
      n->number = std::strtod(s_.c_str() + pos_, &end);
      if (end == s_.c_str() + pos_) fail("bad number");
      pos_ = end - s_.c_str();
      return n;
    }
    const std::string name = word();
    if (name.empty()) {
      fail("expected a number or a name, got '" + std::string(1, c) + "'");
      return n;
    }
    TourCall call{name, {}};
    if (accept("(")) {
      if (!accept(")")) {
        do {
          const std::string arg = literal();
          if (arg.empty()) {
            fail("expected an argument (a number or a word)");
            return n;
          }
          call.args.push_back(arg);
        } while (accept(","));
        if (!accept(")")) fail("expected ')' after the arguments of " + name);
      }
    }
    if (failed()) return n;
    const size_t at = pos_;
    if (known_) {
      if (const std::string why = known_(call); !why.empty()) {
        pos_ = start_;
        fail(why);
        pos_ = at;
        return n;
      }
    }
    n->kind = Node::Kind::Call;
    n->key = call.key();
    calls_.push_back(call);
    return n;
  }
  std::string word() {
    skipSpace();
    start_ = pos_;
    size_t end = pos_;
    if (end < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[end])) || s_[end] == '_'))
      while (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) ++end;
    std::string w = s_.substr(pos_, end - pos_);
    pos_ = end;
    return w;
  }
  // An argument: a (signed) number, a word, or a quoted string (its text without the quotes).
  std::string literal() {
    skipSpace();
    if (pos_ < s_.size() && (s_[pos_] == '"' || s_[pos_] == '\'')) {
      const char quote = s_[pos_];
      const size_t close = s_.find(quote, pos_ + 1);
      if (close == std::string::npos) return {};
      std::string text = s_.substr(pos_ + 1, close - pos_ - 1);
      pos_ = close + 1;
      return text;
    }
    size_t end = pos_;
    while (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || std::string("_.-%").find(s_[end]) != std::string::npos))
      ++end;
    std::string text = s_.substr(pos_, end - pos_);
    pos_ = end;
    return text;
  }

  const std::string& s_;
  const std::function<std::string(const TourCall&)>& known_;
  std::vector<TourCall>& calls_;
  size_t pos_ = 0;
  size_t start_ = 0;  // where the last name began, for error columns
  int depth_ = 0;     // nesting of the expression being parsed (Level)
  std::string error_;
};

bool validFormat(const std::string& f) {
  if (f.empty() || f == "%" || f == "d") return true;
  if (f.size() < 3 || f[0] != '.' || !std::isdigit(static_cast<unsigned char>(f[1]))) return false;
  size_t i = 1;
  while (i < f.size() && std::isdigit(static_cast<unsigned char>(f[i]))) ++i;
  return i == f.size() - 1 && (f[i] == 'f' || f[i] == '%') && std::atoi(f.c_str() + 1) <= 9;
}

}  // namespace

std::string TourExpression::parse(const std::string& text, TourExpression& out,
                                  const std::function<std::string(const TourCall&)>& known) {
  // A chain of operators makes a tree as deep as it is long, which evaluating and freeing recurse
  // through: real conditions are a line, so a longer one is refused before it is parsed.
  constexpr size_t kMaxLength = 1000;
  if (text.size() > kMaxLength)
    return "the expression is " + std::to_string(text.size()) + " characters long; at most " + std::to_string(kMaxLength) + " are read";
  TourExpression e;
  e.text_ = text;
  Parser parser(text, known, e.calls_);
  NodePtr root = parser.parseAll();
  if (parser.failed()) return parser.error();
  e.root_ = std::move(root);
  out = std::move(e);
  return {};
}

double TourExpression::evaluate(const TourNumbers& numbers) const { return root_ ? root_->eval(numbers) : kUnknown; }

bool TourExpression::holds(const TourNumbers& numbers) const {
  const double v = evaluate(numbers);
  return std::isfinite(v) && v != 0;
}

std::string formatTourNumber(double value, const std::string& format) {
  if (!std::isfinite(value)) return "n/a";
  char buffer[64];
  if (format == "d") {
    std::snprintf(buffer, sizeof buffer, "%.0f", std::round(value));
  } else if (format == "%") {
    std::snprintf(buffer, sizeof buffer, "%.1f%%", 100 * value);
  } else if (!format.empty() && format.back() == '%') {
    std::snprintf(buffer, sizeof buffer, "%.*f%%", std::atoi(format.c_str() + 1), 100 * value);
  } else if (!format.empty()) {
    std::snprintf(buffer, sizeof buffer, "%.*f", std::atoi(format.c_str() + 1), value);
  } else if (value == std::round(value) && std::fabs(value) < 1e15) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.3g", value);
  }
  return buffer;
}

std::string TourTemplate::parse(const std::string& text, TourTemplate& out,
                                const std::function<std::string(const TourCall&)>& known) {
  TourTemplate t;
  std::string literal;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      literal += c;
      ++i;
      continue;
    }
    if (c == '}') return "column " + std::to_string(i + 1) + ": '}' without '{' (write '}}' for a brace)";
    if (c != '{') {
      literal += c;
      continue;
    }
    const size_t close = text.find('}', i);
    if (close == std::string::npos) return "column " + std::to_string(i + 1) + ": '{' is never closed (write '{{' for a brace)";
    std::string inside = text.substr(i + 1, close - i - 1), format;
    if (const size_t colon = inside.rfind(':'); colon != std::string::npos) {
      format = inside.substr(colon + 1);
      inside = inside.substr(0, colon);
    }
    if (!validFormat(format)) return "column " + std::to_string(i + 1) + ": unknown format ':" + format + "' (use .2f, %, .1%, d)";
    Piece piece;
    if (const std::string why = TourExpression::parse(inside, piece.expression, known); !why.empty())
      return "column " + std::to_string(i + 1) + ": in {" + inside + "}: " + why;
    piece.format = format;
    if (!literal.empty()) t.pieces_.push_back({literal, {}, {}});
    literal.clear();
    t.pieces_.push_back(std::move(piece));
    i = close;
  }
  if (!literal.empty()) t.pieces_.push_back({literal, {}, {}});
  out = std::move(t);
  return {};
}

std::string TourTemplate::render(const TourNumbers& numbers) const {
  std::string s;
  for (const Piece& p : pieces_) s += p.expression.empty() ? p.literal : formatTourNumber(p.expression.evaluate(numbers), p.format);
  return s;
}

std::vector<TourCall> TourTemplate::calls() const {
  std::vector<TourCall> all;
  for (const Piece& p : pieces_) all.insert(all.end(), p.expression.calls().begin(), p.expression.calls().end());
  return all;
}

bool TourTemplate::hasPlaceholders() const {
  for (const Piece& p : pieces_)
    if (!p.expression.empty()) return true;
  return false;
}

}  // namespace attnlab
