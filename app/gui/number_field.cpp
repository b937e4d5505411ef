#include "number_field.h"

#include <QLocale>
#include <climits>
#include <cmath>

namespace attnlab {

NumberField::NumberField(const QString& key, Kind kind, QWidget* parent) : QLineEdit(parent), key_(key), kind_(kind) {
  setObjectName(key);
  setClearButtonEnabled(false);
}

QString NumberField::format(double value) {
  // The shortest text that reads back as the same number ("0.003", "1e-08", "128").
  return QLocale::c().toString(value, 'g', QLocale::FloatingPointShortest);
}

void NumberField::setNumber(double value) { setText(format(value)); }

void NumberField::setDefault(double value) {
  hasDefault_ = true;
  setPlaceholderText(format(value));
}

QString NumberField::read(std::optional<double>& value) const {
  const QString t = text().trimmed();
  if (t.isEmpty()) {
    value.reset();
    return hasDefault_ ? QString() : tr("%1 needs a value").arg(key_);
  }
  bool ok = false;
  const QLocale c = QLocale::c();
  switch (kind_) {
    case Kind::Integer: {
      const qlonglong v = c.toLongLong(t, &ok);
      if (!ok || v < INT_MIN || v > INT_MAX) return tr("%1 must be a whole number, got \u201c%2\u201d").arg(key_, t);
      value = static_cast<double>(v);
      return {};
    }
    case Kind::Unsigned: {
      quint64 v = 0;
      if (QString why = readUnsigned(v); !why.isEmpty()) return why;
      value = static_cast<double>(v);
      return {};
    }
    case Kind::Real: {
      const double v = c.toDouble(t, &ok);
      if (!ok || !std::isfinite(v)) return tr("%1 must be a number, got \u201c%2\u201d").arg(key_, t);
      value = v;
      return {};
    }
  }
  return {};
}

QString NumberField::readUnsigned(quint64& value) const {
  bool ok = false;
  const QString t = text().trimmed();
  const qulonglong v = QLocale::c().toULongLong(t, &ok);
  if (!ok) return tr("%1 must be a whole number \u2265 0, got \u201c%2\u201d").arg(key_, t);
  value = v;
  return {};
}

void NumberField::setProblem(const QString& reason) {
  setProperty("invalid", !reason.isEmpty());
  setStyleSheet(reason.isEmpty() ? QString() : QStringLiteral("QLineEdit { border: 1px solid #c62828; background: #fdecea; }"));
  setToolTip(reason.isEmpty() ? help_ : reason);
}

void NumberField::setHelp(const QString& help) {
  help_ = help;
  if (!property("invalid").toBool()) setToolTip(help_);
}

}  // namespace attnlab
