// Unicode NFC (tokenizer/nfc.h) against Python's unicodedata.normalize('NFC') on thousands of
// strings: combining sequences in every order, Hangul syllables and conjoining jamo, singletons,
// composition exclusions, non-starter decompositions, and random code points of many scripts.
// Then a tokenizer.json with an NFC normalizer (as Qwen2's) loads and encodes a decomposed text as
// its composed form.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "core/random.h"
#include "tokenizer/byte_alphabet.h"
#include "tokenizer/nfc.h"
#include "tokenizer/tokenizer_files.h"
#include "tokenizer/unicode_classes.h"

using namespace attnlab;
using nlohmann::json;

namespace {

// Code points that exercise normalization, and ranges to draw from at random.
const std::vector<char32_t> kSpecial = {
    'a', 'e', 'o', 'A', 'E', 'u', 'n', 'c', ' ', 0xE9, 0xC5, 0x212B, 0x2126, 0x212A,  // singletons: Angstrom, Ohm, Kelvin
    0x0300, 0x0301, 0x0302, 0x0303, 0x0308, 0x0323, 0x0327, 0x031B, 0x0345, 0x0344, 0x0340, 0x0341, 0x0343,
    0x0958, 0x0915, 0x093C, 0x0F73, 0x0F71, 0x0F72, 0x0F74, 0x0F81, 0x2ADC, 0x1D15E, 0x1D165, 0x1D16E,  // exclusions
    0x1100, 0x1161, 0x11A8, 0x11A7, 0x11C2, 0xAC00, 0xAC01, 0xD7A3, 0x1112, 0x1175, 0x3131,            // Hangul
    0x0391, 0x03B1, 0x0313, 0x0314, 0x1F00, 0x03C9, 0x0342, 0x1FF3, 0x0CC6, 0x0CC2, 0x0CD5, 0x0B47, 0x0B3E, 0x0B57,
    0x09C7, 0x09BE, 0x0DD9, 0x0DCF, 0x0DCA, 0x1025, 0x102E, 0x3099, 0x304B, 0x30AB, 0x309A, 0x05D0, 0x05B7, 0x05BC,
    0x0627, 0x0653, 0x0654, 0x0655, 0x064E, 0x1E0A, 0x1E0C, 0x0307, 0x1EA0, 0x1EC7, 0x01FA, 0x0338, '=', '<', '>',
    0x00A8, 0x1FED, 0x0385, 0xFB2C, 0x2000, 0x2001, 0x1F600, 0x4E00, 0xF900, 0x2F800, 0x0130, 0x0069, 0x0049,
};
const std::vector<std::pair<char32_t, char32_t>> kRanges = {
    {0x20, 0x7E},     {0xA0, 0x24F},   {0x300, 0x36F},   {0x370, 0x3FF},   {0x400, 0x4FF},   {0x590, 0x6FF},
    {0x900, 0xDFF},   {0xF00, 0xFFF},  {0x1000, 0x109F}, {0x1100, 0x11FF}, {0x1E00, 0x1FFF}, {0x2000, 0x22FF},
    {0x3040, 0x30FF}, {0x3130, 0x318F}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFB00, 0xFB4F}, {0x1D100, 0x1D1FF},
    {0x1F300, 0x1F64F}, {0x2F800, 0x2FA1F}, {0x11000, 0x1107F}, {0x110B0, 0x110FF}, {0x11300, 0x1137F},
};

std::string utf8(const std::u32string& s) {
  std::string out;
  for (char32_t c : s) out += encodeCodePoint(c);
  return out;
}

std::vector<std::string> testStrings() {
  std::vector<std::string> out;
  // Every special code point alone, and every ordered pair of them.
  for (char32_t a : kSpecial) {
    out.push_back(utf8({a}));
    for (char32_t b : kSpecial) out.push_back(utf8({a, b}));
  }
  Rng rng(2024);
  auto pick = [&] {
    if (rng.uniform() < 0.5) return kSpecial[rng.uniformInt(0, static_cast<int>(kSpecial.size()) - 1)];
    const auto& [lo, hi] = kRanges[rng.uniformInt(0, static_cast<int>(kRanges.size()) - 1)];
    char32_t c = static_cast<char32_t>(lo + rng.uniformInt(0, static_cast<int>(hi - lo)));
    return c >= 0xD800 && c < 0xE000 ? char32_t('x') : c;
  };
  for (int i = 0; i < 6000; ++i) {
    std::u32string s;
    const int length = rng.uniformInt(1, 12);
    for (int k = 0; k < length; ++k) s += pick();
    out.push_back(utf8(s));
  }
  // Long marks runs on one base (reordering and blocking), and jamo sequences.
  for (int i = 0; i < 500; ++i) {
    std::u32string s = {kSpecial[rng.uniformInt(0, 10)]};
    for (int k = 0; k < 8; ++k) s += static_cast<char32_t>(0x300 + rng.uniformInt(0, 0x6F));
    out.push_back(utf8(s));
    s = {};
    for (int k = 0; k < 9; ++k)
      s += static_cast<char32_t>(k % 3 == 0 ? 0x1100 + rng.uniformInt(0, 18) : k % 3 == 1 ? 0x1161 + rng.uniformInt(0, 20) : 0x11A7 + rng.uniformInt(0, 27));
    out.push_back(utf8(s));
  }
  return out;
}

}  // namespace

class NfcTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void matchesPythonUnicodedata() {
    const std::vector<std::string> strings = testStrings();
    const QString input = tmp_.path() + "/in.json", output = tmp_.path() + "/out.json";
    {
      QFile f(input);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(QByteArray::fromStdString(json(strings).dump()));
    }
    // null where a string holds a code point this Python's Unicode version does not assign.
    const QString script = QStringLiteral(
        "import json, sys, unicodedata\n"
        "s = json.load(open(sys.argv[1], encoding='utf-8'))\n"
        "out = [None if any(unicodedata.category(c) == 'Cn' for c in x) else unicodedata.normalize('NFC', x) for x in s]\n"
        "json.dump({'version': unicodedata.unidata_version, 'nfc': out}, open(sys.argv[2], 'w', encoding='utf-8'))\n");
    QProcess python;
    python.start(QStringLiteral("python3"), {QStringLiteral("-c"), script, input, output});
    QVERIFY2(python.waitForFinished(120000) && python.exitCode() == 0, python.readAllStandardError().constData());
    QFile f(output);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const json reference = json::parse(f.readAll().toStdString());
    const json& nfc = reference["nfc"];
    QCOMPARE(nfc.size(), strings.size());
    size_t compared = 0, changed = 0;
    for (size_t i = 0; i < strings.size(); ++i) {
      if (nfc[i].is_null()) continue;
      const std::string expected = nfc[i].get<std::string>();
      const std::string mine = toNfc(strings[i]);
      if (mine != expected)
        QFAIL(qPrintable(QStringLiteral("NFC of %1 is %2, Python %3 says %4")
                             .arg(QString::fromStdString(strings[i]).toUcs4().size())
                             .arg(QString::fromStdString(mine), QString::fromStdString(reference["version"].get<std::string>()),
                                  QString::fromStdString(expected))));
      ++compared;
      changed += expected != strings[i];
      QCOMPARE(toNfc(expected), expected);  // NFC is idempotent
    }
    qInfo("compared %zu strings (%zu changed by NFC), Python's Unicode %s", compared, changed,
          reference["version"].get<std::string>().c_str());
    QVERIFY(compared > strings.size() * 9 / 10);
    QVERIFY(changed > 2000);
  }

  void knownCases() {
    QCOMPARE(toNfc("e\xCC\x81"), std::string("\xC3\xA9"));                // e + acute -> é
    QCOMPARE(toNfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8"), std::string("\xEA\xB0\x81"));  // jamo -> 각
    QCOMPARE(toNfc("\xE2\x84\xAB"), std::string("\xC3\x85"));             // Angstrom sign -> Å
    QCOMPARE(toNfc("\xE0\xA5\x98"), std::string("\xE0\xA4\x95\xE0\xA4\xBC"));  // U+0958 stays decomposed (excluded)
    QCOMPARE(toNfc("plain ascii"), std::string("plain ascii"));
    QCOMPARE(combiningClass(0x301), 230);
    QCOMPARE(combiningClass('a'), 0);
  }

  // A tokenizer.json with Qwen2's {"type": "NFC"} normalizer loads, and "é" spelled decomposed
  // encodes as the composed one; other normalizers are still refused in one line.
  void tokenizerWithNfcNormalizerLoads() {
    TokenizerSpec spec;
    spec.kind = "byte_level_bpe";
    for (int b = 0; b < 256; ++b) spec.vocab.push_back(toByteAlphabet(std::string(1, static_cast<char>(b))));
    spec.merges = {{toByteAlphabet("\xC3"), toByteAlphabet("\xA9")}};
    spec.vocab.push_back(toByteAlphabet("\xC3\xA9"));
    spec.nfc = true;
    const QString path = tmp_.path() + "/nfc/tokenizer.json";
    QDir().mkpath(tmp_.path() + "/nfc");
    json tokenizer = json::parse(byteLevelTokenizerJson(spec));
    QCOMPARE(tokenizer["normalizer"]["type"].get<std::string>(), std::string("NFC"));
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(QByteArray::fromStdString(tokenizer.dump()));
    }
    std::string error;
    std::unique_ptr<Tokenizer> loaded = loadTokenizer(path.toStdString(), error);
    QVERIFY2(loaded, error.c_str());
    std::vector<int> composed, decomposed;
    QCOMPARE(QString::fromStdString(loaded->encode("caf\xC3\xA9", composed)), QString());
    QCOMPARE(QString::fromStdString(loaded->encode("cafe\xCC\x81", decomposed)), QString());
    QCOMPARE(decomposed, composed);
    QCOMPARE(composed.back(), 256);

    tokenizer["normalizer"] = {{"type", "NFKC"}};
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
      f.write(QByteArray::fromStdString(tokenizer.dump()));
    }
    QVERIFY(!loadTokenizer(path.toStdString(), error));
    QVERIFY2(QString::fromStdString(error).contains("NFKC") && error.find('\n') == std::string::npos, error.c_str());
  }
};

QTEST_GUILESS_MAIN(NfcTest)
#include "test_nfc.moc"
