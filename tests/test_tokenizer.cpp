// The tokenizers on hand-made files: the split patterns cut where the regexes do (expected pieces
// written out by hand), BPE merges by rank, byte fallback, added tokens and the BOS template, the
// round trip on random UTF-8, the Unicode classes, and clear messages for bad text and bad files.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "core/utf8.h"
#include "tokenizer/byte_alphabet.h"
#include "tokenizer/split_pattern.h"
#include "tokenizer/tokenizer_files.h"
#include "tokenizer/unicode_classes.h"

using namespace attnlab;
using nlohmann::json;

namespace {

std::vector<std::string> pieces(SplitPattern pattern, const std::string& text) {
  std::vector<std::string_view> views;
  splitByPattern(pattern, text, views);
  return {views.begin(), views.end()};
}

void writeFile(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// A byte-level vocabulary: the 256 byte tokens, then one token per merge.
json byteLevelVocab(const std::vector<std::pair<std::string, std::string>>& merges) {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[encodeCodePoint(byteToCodePoint(static_cast<unsigned char>(b)))] = b;
  for (const auto& [l, r] : merges) vocab[l + r] = vocab.size();
  return vocab;
}

std::unique_ptr<Tokenizer> fromJson(const json& root, const std::string& dir) {
  const std::string path = dir + "/tokenizer.json";
  writeFile(path, root.dump());
  std::string error;
  auto tokenizer = loadTokenizer(path, error);
  if (!tokenizer) qWarning("%s", error.c_str());
  return tokenizer;
}

json byteLevelJson(const std::vector<std::pair<std::string, std::string>>& merges) {
  json m = json::array();
  for (const auto& [l, r] : merges) m.push_back(l + " " + r);
  return {{"model", {{"type", "BPE"}, {"vocab", byteLevelVocab(merges)}, {"merges", m}}},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}}};
}

// Llama 2's layout: specials, 256 byte tokens, then characters and merges.
json sentencePieceJson(const std::vector<std::string>& characters, const std::vector<std::pair<std::string, std::string>>& merges) {
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  for (int b = 0; b < 256; ++b) vocab[byteTokenName(static_cast<char>(b))] = vocab.size();
  for (const auto& c : characters) vocab[c] = vocab.size();
  json m = json::array();
  for (const auto& [l, r] : merges) {
    if (!vocab.contains(l + r)) vocab[l + r] = vocab.size();
    m.push_back(l + " " + r);
  }
  return {
      {"added_tokens", {{{"id", 0}, {"content", "<unk>"}, {"special", true}}, {{"id", 1}, {"content", "<s>"}, {"special", true}},
                        {{"id", 2}, {"content", "</s>"}, {"special", true}}}},
      {"normalizer", {{"type", "Sequence"},
                      {"normalizers", {{{"type", "Prepend"}, {"prepend", "\u2581"}},
                                       {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}}}}},
      {"pre_tokenizer", nullptr},
      {"post_processor", {{"type", "TemplateProcessing"},
                          {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
                          {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", m}, {"byte_fallback", true}, {"unk_token", "<unk>"}, {"fuse_unk", true}}}};
}

std::vector<int> encodeOrFail(const Tokenizer& t, const std::string& text, bool addSpecial = false) {
  std::vector<int> ids;
  const std::string error = t.encode(text, ids, addSpecial);
  if (!error.empty()) qWarning("%s", error.c_str());
  return ids;
}

std::string decodeOrFail(const Tokenizer& t, const std::vector<int>& ids) {
  std::string text;
  const std::string error = t.decode(ids, text);
  if (!error.empty()) qWarning("%s", error.c_str());
  return text;
}

// Random valid UTF-8 drawn from ASCII, Latin, CJK, emoji and whitespace, with runs.
std::string randomUtf8(std::mt19937& rng, int length) {
  static const std::vector<std::pair<char32_t, char32_t>> blocks = {
      {0x20, 0x7E}, {0x09, 0x0D}, {0xA0, 0x17F}, {0x300, 0x36F}, {0x400, 0x4FF}, {0x4E00, 0x4E80}, {0x1F600, 0x1F64F}, {0x10000, 0x10FFFF}};
  std::string out;
  for (int i = 0; i < length; ++i) {
    const auto& [lo, hi] = blocks[rng() % blocks.size()];
    char32_t c = lo + rng() % (hi - lo + 1);
    if (c >= 0xD800 && c <= 0xDFFF) c = 'x';
    const std::string s = encodeCodePoint(c);
    for (int r = rng() % 4 == 0 ? 1 + rng() % 5 : 1; r > 0; --r) out += s;
  }
  return out;
}

}  // namespace

class TokenizerTest : public QObject {
  Q_OBJECT
 private slots:
  void unicodeClasses() {
    QVERIFY(isLetter('a') && isLetter(U'é') && isLetter(U'ж') && isLetter(U'中') && isLetter(U'ß'));
    QVERIFY(!isLetter('1') && !isLetter(' ') && !isLetter(U'😀') && !isLetter(0x301));  // combining acute is Mn
    QVERIFY(isNumber('7') && isNumber(U'٣') && isNumber(U'Ⅻ') && isNumber(U'½') && !isNumber('x'));
    QVERIFY(isWhiteSpace(' ') && isWhiteSpace('\n') && isWhiteSpace(0x85) && isWhiteSpace(0x3000) && !isWhiteSpace(0xFEFF));
  }

  void gpt2PatternPieces() {
    using V = std::vector<std::string>;
    QCOMPARE(pieces(SplitPattern::Gpt2, "Hello world's  3.14!!  \n"),
             (V{"Hello", " world", "'s", " ", " 3", ".", "14", "!!", "  \n"}));
    QCOMPARE(pieces(SplitPattern::Gpt2, "I'LL don't  x"), (V{"I", "'", "LL", " don", "'t", " ", " x"}));
    QCOMPARE(pieces(SplitPattern::Gpt2, "a\t\tb"), (V{"a", "\t", "\t", "b"}));
    QCOMPARE(pieces(SplitPattern::Gpt2, "日本語 😀😀 x"), (V{"日本語", " 😀😀", " x"}));
    QCOMPARE(pieces(SplitPattern::Gpt2, "   "), (V{"   "}));
  }

  void llama3AndQwen2PatternPieces() {
    using V = std::vector<std::string>;
    QCOMPARE(pieces(SplitPattern::Llama3, "I'LL pay 12345 now\n\n  ok"),
             (V{"I", "'LL", " pay", " ", "123", "45", " now", "\n\n", " ", " ok"}));
    QCOMPARE(pieces(SplitPattern::Llama3, "\thello ...\n\nx"), (V{"\thello", " ...\n\n", "x"}));
    QCOMPARE(pieces(SplitPattern::Qwen2, "x 2024"), (V{"x", " ", "2", "0", "2", "4"}));
    QCOMPARE(pieces(SplitPattern::Llama3, "a \n b"), (V{"a", " \n", " b"}));
    SplitPattern p;
    QVERIFY(splitPatternFromRegex(R"(\p{N}|foo)", p) == false);
  }

  void byteLevelMergesByRank() {
    QTemporaryDir dir;
    // "ab" merges before "bc": "abc" -> ["ab", "c"]; then "ab"+"c" completes "abc".
    const auto t = fromJson(byteLevelJson({{"a", "b"}, {"b", "c"}, {"ab", "c"}, {"Ġ", "a"}}), dir.path().toStdString());
    QVERIFY(t);
    QCOMPARE(t->vocabSize(), 260);
    QCOMPARE(encodeOrFail(*t, "abc"), (std::vector<int>{258}));
    QCOMPARE(encodeOrFail(*t, "bc"), (std::vector<int>{257}));
    QCOMPARE(encodeOrFail(*t, " ab"), (std::vector<int>{' ', 256}));  // "ab" ranks before "Ġa"
    QCOMPARE(t->displayToken(259), std::string("\u2423a"));
    QCOMPARE(t->displayToken('\n'), std::string("\u21B5"));
    QCOMPARE(t->displayToken(0xE2), std::string("<0xE2>"));
  }

  void roundTripOnRandomUtf8() {
    QTemporaryDir dir;
    const auto byteLevel = fromJson(byteLevelJson({{"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}}), dir.path().toStdString());
    const auto sentencePiece = fromJson(sentencePieceJson({"\u2581", "a", "b"}, {{"\u2581", "a"}, {"a", "b"}}), dir.path().toStdString());
    QVERIFY(byteLevel && sentencePiece);
    std::mt19937 rng(7);
    for (int i = 0; i < 500; ++i) {
      const std::string text = randomUtf8(rng, 1 + i % 60) + (i % 7 == 0 ? "<s>" : "") + (i % 5 == 0 ? " ab" : "");
      for (const Tokenizer* t : {byteLevel.get(), sentencePiece.get()}) {
        const std::string back = decodeOrFail(*t, encodeOrFail(*t, text));
        if (back != text) QFAIL(("round trip failed for '" + printableToken(text) + "': '" + printableToken(back) + "'").c_str());
      }
    }
  }

  void sentencePieceFallbackAndTemplate() {
    QTemporaryDir dir;
    const auto t = fromJson(sentencePieceJson({"\u2581", "a", "b"}, {{"\u2581", "a"}, {"a", "b"}, {"\u2581a", "b"}}),
                            dir.path().toStdString());
    QVERIFY(t);
    const int space = t->id("\u2581"), ab = t->id("ab"), spaceAb = t->id("\u2581ab");
    QVERIFY(space > 0 && ab > 0 && spaceAb > 0);
    // "ab b": ▁ab, ▁, b ; "é" has no token: its two UTF-8 bytes.
    QCOMPARE(encodeOrFail(*t, "ab b"), (std::vector<int>{spaceAb, space, t->id("b")}));
    QCOMPARE(encodeOrFail(*t, "é"), (std::vector<int>{space, t->id("<0xC3>"), t->id("<0xA9>")}));
    QCOMPARE(encodeOrFail(*t, "ab", true), (std::vector<int>{1, spaceAb}));  // BOS from the template
    QCOMPARE(encodeOrFail(*t, "<s>ab"), (std::vector<int>{1, spaceAb}));     // an added token in the text
    QCOMPARE(t->spec().prefix, (std::vector<int>{1}));
    QCOMPARE(t->displayToken(spaceAb), std::string("\u2423ab"));
  }

  void invalidUtf8IsExplained() {
    QTemporaryDir dir;
    const auto t = fromJson(byteLevelJson({}), dir.path().toStdString());
    std::vector<int> ids;
    const std::string error = t->encode("ok\xC3(", ids);
    QVERIFY2(error.find("not valid UTF-8") != std::string::npos && error.find("offset 2") != std::string::npos, error.c_str());
    std::string text;
    QVERIFY(t->decode({5, 999999}, text).find("999999") != std::string::npos);
  }

  void vocabAndMergesWithConfigs() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    json vocab = byteLevelVocab({{"Ġ", "x"}});
    vocab["<|endoftext|>"] = 257;
    writeFile(d + "/vocab.json", vocab.dump());
    writeFile(d + "/merges.txt", "#version: 0.2\nĠ x\n");
    writeFile(d + "/tokenizer_config.json", R"({"bos_token": "<|endoftext|>", "eos_token": {"content": "<|endoftext|>"}})");
    std::string error;
    const auto t = loadTokenizer(d, error);
    QVERIFY2(t, error.c_str());
    QCOMPARE(t->spec().bos, 257);
    QCOMPARE(t->spec().eos, 257);
    QCOMPARE(encodeOrFail(*t, " x<|endoftext|>"), (std::vector<int>{256, 257}));
    QVERIFY(t->spec().prefix.empty());  // GPT-2 adds no BOS
  }

  void badFilesAreExplained() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    auto errorFor = [&](const std::string& text) {
      writeFile(d + "/tokenizer.json", text);
      std::string error;
      return loadTokenizer(d + "/tokenizer.json", error) ? std::string("(loaded)") : error;
    };
    QVERIFY(errorFor("{\"model\": ").find("not a JSON object") != std::string::npos);
    QVERIFY(errorFor(R"({"model": {"type": "Unigram"}})").find("'Unigram' is not supported") != std::string::npos);
    json j = byteLevelJson({{"a", "b"}});
    j["model"]["merges"] = {"a zz"};
    QVERIFY(errorFor(j.dump()).find("names a token the vocabulary lacks") != std::string::npos);
    j = byteLevelJson({});
    j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "\\w+"}}}, {"behavior", "Isolated"}};
    QVERIFY(errorFor(j.dump()).find("not one of the known ones") != std::string::npos);
    j = byteLevelJson({});
    j["normalizer"] = {{"type", "NFKC"}};
    QVERIFY(errorFor(j.dump()).find("'NFKC' is not supported") != std::string::npos);
    std::string error;
    QVERIFY(!loadTokenizer(d + "/nothing", error) && error.find("no such file") != std::string::npos);
    writeFile(d + "/vocab.json", "{}");
    std::filesystem::remove(d + "/tokenizer.json");
    QVERIFY(!loadTokenizer(d, error) && error.find("merges.txt") != std::string::npos);
  }

  void longWhitespaceRunIsFast() {
    QTemporaryDir dir;
    const auto t = fromJson(byteLevelJson({{"Ġ", "Ġ"}, {"ĠĠ", "ĠĠ"}}), dir.path().toStdString());
    QElapsedTimer timer;
    timer.start();
    const std::vector<int> ids = encodeOrFail(*t, std::string(200000, ' '));
    QCOMPARE(decodeOrFail(*t, ids), std::string(200000, ' '));
    QCOMPARE(ids.size(), size_t(200000 / 4));
    QVERIFY2(timer.elapsed() < 5000, "a 200,000-space run took over 5 s");
  }
};

QTEST_MAIN(TokenizerTest)
#include "test_tokenizer.moc"
