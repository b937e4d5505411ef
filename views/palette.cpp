#include "palette.h"

#include <array>

namespace attnlab {

QColor categoryColor(int category) {
  static const std::array<QColor, 12> colors = {
      QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44),  QColor(214, 39, 40),
      QColor(148, 103, 189), QColor(140, 86, 75), QColor(227, 119, 194), QColor(127, 127, 127),
      QColor(188, 189, 34), QColor(23, 190, 207), QColor(90, 90, 200),   QColor(200, 160, 60)};
  if (category < 0) category = -category;
  const QColor base = colors[category % colors.size()];
  const int round = category / static_cast<int>(colors.size());
  return round == 0 ? base : base.darker(100 + 35 * round);
}

}  // namespace attnlab
