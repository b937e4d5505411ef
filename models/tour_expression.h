#pragma once
// The small expression language of a tour: conditions ("induction(2,1) > 0.3 and step >= 200"),
// checks, and the numbers a step's text shows ("{induction(2,1):.2f}"). An expression names live
// numbers of the learner's run as calls, `name` or `name(arg, ...)` with literal arguments
// (numbers, words or quoted strings), and combines them with + - * /, comparisons (< <= > >= ==
// !=) and `and`, `or`, `not` (also && || !). A comparison is 1 when it holds, else 0.
//
// Evaluation never computes the numbers itself: it looks each call up (TourNumbers), so the run's
// numbers can be computed off the UI thread first (calls() lists which are needed). A number
// that is not known (not measured, not in this model) is NaN, and a NaN makes a condition false.
// Plain C++, no Qt: the parser is unit-tested on its own.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attnlab {

struct TourCall {
  std::string name;
  std::vector<std::string> args;  // literal text: "2", "streaming_llm"
  // Canonical text, "name" or "name(a,b)": the key under which its value is looked up.
  std::string key() const;
  double numberArg(size_t i) const;  // NaN when absent or not a number
};

// The run's numbers, keyed by TourCall::key().
using TourNumbers = std::map<std::string, double>;

class TourExpression {
 public:
  // Parses `text`; returns "" or a one-line reason with the column ("at column 12: expected ')'").
  // `known` (optional) tells whether a call names a known number and has the right arguments;
  // it returns "" or the reason, which the parser reports.
  static std::string parse(const std::string& text, TourExpression& out,
                           const std::function<std::string(const TourCall&)>& known = {});

  double evaluate(const TourNumbers& numbers) const;  // NaN when a number is unknown
  bool holds(const TourNumbers& numbers) const;       // finite and non-zero
  const std::vector<TourCall>& calls() const { return calls_; }
  const std::string& text() const { return text_; }
  bool empty() const { return !root_; }

  struct Node;

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
  std::vector<TourCall> calls_;
};

// A step's text with "{expression}" or "{expression:format}" placeholders ("{{" and "}}" are
// literal braces). Formats: ".Nf" (N decimals), "%" (a share as a percentage, one decimal),
// ".N%" (N decimals), "d" (rounded to a whole number); none: whole numbers as such, others to
// three significant digits. An unknown number shows as "n/a".
class TourTemplate {
 public:
  // Returns "" or "column C: reason" for the first bad placeholder.
  static std::string parse(const std::string& text, TourTemplate& out,
                           const std::function<std::string(const TourCall&)>& known = {});
  std::string render(const TourNumbers& numbers) const;
  std::vector<TourCall> calls() const;
  bool hasPlaceholders() const;

 private:
  struct Piece {
    std::string literal;  // when expression is empty
    TourExpression expression;
    std::string format;
  };
  std::vector<Piece> pieces_;
};

std::string formatTourNumber(double value, const std::string& format);

}  // namespace attnlab
