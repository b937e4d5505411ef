#pragma once
// Colours for categories (tokens, roles, heads): twelve hues far apart at similar lightness, so
// no category stands out by brightness alone. Beyond twelve the hues repeat a shade darker.
#include <QColor>

namespace attnlab {

QColor categoryColor(int category);

}  // namespace attnlab
