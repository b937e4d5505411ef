#pragma once
// Test strings for comparing tokenizers: words, numbers, contractions, whitespace runs, emoji,
// mixed scripts, punctuation and code, joined at random, and every 50th one a long line.
#include <random>
#include <string>
#include <vector>

inline std::vector<std::string> peerTestStrings(int count, unsigned seed, bool withSpecialWhitespace) {
  static const std::vector<std::string> words = {
      "the", "The", "THE", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "attention", "Transformer",
      "tokenization", "naïve", "café", "résumé", "über", "straße", "hello", "World", "GPT", "llama", "Qwen",
      "internationalization", "a", "I", "antidisestablishmentarianism", "x", "ab", "zzz", "OpenAI", "HuggingFace"};
  static const std::vector<std::string> contractions = {
      "don't", "I'm", "we've", "they're", "she'll", "he'd", "it's", "IT'S", "I'LL", "O'Neil", "rock'n'roll", "'s",
      "''", "'", "can't've", "y'all", "'tis", "'Re"};
  static const std::vector<std::string> scripts = {
      "Привет", "мир", "Ελληνικά", "中文字符", "日本語のテキスト", "カタカナ", "한국어", "العربية", "हिन्दी", "ไทย",
      "עברית", "e\u0301", "n\u0303o", "Ǆ", "ﬁ", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "ꙮ", "ᚠᚢᚦ", "𐍈"};
  static const std::vector<std::string> emoji = {
      "😀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "❤️", "🤖", "🧪🧪", "⭐", "✨", "🏳️‍🌈", "😂😂😂"};
  static const std::vector<std::string> punctuation = {
      "...", "!?", "—", "“quoted”", "(x)", "#", "@user", "https://example.org/a?q=1&b=2", "for (int i=0;i<n;++i) {",
      "}", "$", "%", "€5", "~/.cache", "a_b", "<tag>", "\"", "«»", "¿", "¡", "…", "·", "§2", "C++", "x=y+z", "--"};
  static const std::vector<std::string> numbers = {
      "0", "7", "42", "2024", "12345", "3.14159", "1,000,000", "٣٤٥", "Ⅻ", "½", "²", "0x1F", "1e-9", "10,000.5",
      "০১২", "９９"};
  std::vector<std::string> whitespace = {" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "\t\t", "      ",
                                         "\u00A0", "\u3000", "\u2003", " \u2009 ", "\n   \n"};
  if (withSpecialWhitespace) whitespace.insert(whitespace.end(), {"\u0085", "\uFEFF", "\u200B"});

  std::mt19937 rng(seed);
  auto pick = [&](const std::vector<std::string>& list) -> const std::string& { return list[rng() % list.size()]; };
  auto piece = [&]() -> std::string {
    switch (rng() % 10) {
      case 0: return pick(contractions);
      case 1: return pick(scripts);
      case 2: return pick(emoji);
      case 3: return pick(punctuation);
      case 4: return pick(numbers);
      case 5: return std::to_string(rng() % 100000000);
      case 6: return pick(whitespace);
      default: return pick(words);
    }
  };
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    const bool longLine = i % 50 == 49;
    const size_t target = longLine ? 1500 + rng() % 2500 : 1 + rng() % 60;
    std::string s;
    while (s.size() < target) {
      s += piece();
      const unsigned gap = rng() % 8;
      if (gap < 5) s += ' ';
      else if (gap == 5) s += pick(whitespace);
    }
    if (i % 97 == 0) s = std::string(1 + rng() % 300, ' ');            // whitespace only
    if (i % 89 == 0) s = pick(whitespace) + s + pick(whitespace);       // leading and trailing runs
    out.push_back(std::move(s));
  }
  return out;
}
