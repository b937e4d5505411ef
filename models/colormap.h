#pragma once
// Colour scale for weights: dark violet -> blue -> teal -> green -> yellow, in the spirit of
// viridis. Built in OKLab (a perceptual colour space) with lightness rising linearly, so equal
// steps in weight look like equal steps in brightness, and it reads in greyscale too.
#include <QColor>

namespace attnlab {

// `t` is clamped to [0, 1].
QColor rampColor(double t);

}  // namespace attnlab
