#include "quoted_text.h"

#include <QRegularExpression>

namespace attnlab {

QString shortenLongWords(const QString& text) {
  static const QRegularExpression longWord(QStringLiteral("\\S{%1,}").arg(kMaxQuotedChars + 1));
  QString shortened = text;
  QRegularExpressionMatch match;
  for (qsizetype from = 0; (match = longWord.match(shortened, from)).hasMatch();) {
    const QString word = match.captured();
    const QString kept = word.left(kMaxQuotedChars - 12) + QChar(0x2026) + word.right(8);
    shortened.replace(match.capturedStart(), word.size(), kept);
    from = match.capturedStart() + kept.size();
  }
  return shortened;
}

}  // namespace attnlab
