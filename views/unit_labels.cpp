#include "unit_labels.h"

namespace attnlab {

QString dlaTermLabel(const DlaTerm& term) {
  if (term.layer < 0) return QString::fromStdString(term.name);  // embed, ln_f bias
  if (term.head >= 0) return headName(term.layer, term.head);
  // "attn 1 bias", "mlp 1", "mlp 1 bias": the block's number is the name's second word.
  QStringList words = QString::fromStdString(term.name).split(' ');
  if (words.size() >= 2) words[1] = QString::number(term.layer + 1);
  return words.join(' ');
}

}  // namespace attnlab
