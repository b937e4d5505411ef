#pragma once
// A line edit for one number of the experiment. It never clamps or rewrites what was typed: the
// panel reads it with read(), and a value that is not a number, or that the engine's validation
// refuses, is marked red with the reason as its tooltip (setProblem).
#include <QLineEdit>
#include <optional>

namespace attnlab {

class NumberField : public QLineEdit {
  Q_OBJECT
 public:
  enum class Kind { Integer, Unsigned, Real };
  // `key` names the value in messages and config files, e.g. "model.d_model".
  NumberField(const QString& key, Kind kind, QWidget* parent = nullptr);

  const QString& key() const { return key_; }
  void setNumber(double value);
  // Empty text means "the default" when the field has a placeholder (setDefault), else it is an error.
  void setDefault(double value);
  // Returns "" and sets `value` (nullopt: left empty, meaning the default), or why the text is not a number.
  QString read(std::optional<double>& value) const;
  // The same for 64-bit unsigned values (seeds), which a double cannot hold exactly.
  QString readUnsigned(quint64& value) const;
  // "" clears the mark; otherwise the field turns red and the reason becomes its tooltip.
  void setProblem(const QString& reason);
  void setHelp(const QString& help);  // the tooltip while the value is fine

  static QString format(double value);

 private:
  QString key_;
  Kind kind_;
  bool hasDefault_ = false;
  QString help_;
};

}  // namespace attnlab
