#pragma once
// Messages quote refused input back ("unknown token 'x'"); a pasted paragraph without spaces must
// not fill the window, so every such message goes through shortenLongWords.
#include <QString>

namespace attnlab {

constexpr int kMaxQuotedChars = 40;  // a longer word is elided to this many characters
// Each word (run of non-space characters) longer than kMaxQuotedChars keeps its start and its last
// 8 characters around an ellipsis; the rest of the text is unchanged.
QString shortenLongWords(const QString& text);

}  // namespace attnlab
