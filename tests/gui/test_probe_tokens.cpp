// The probe editor with a subword vocabulary: the probe's tokens appear under the field as chips
// with a ␣ for a leading space, each chip's id on hover, and they follow what the user types.
#include <QLineEdit>
#include <QtTest>

#include "attention_map_model.h"
#include "tokenizer/vocabulary.h"
#include "probe_editor.h"
#include "token_strip.h"
#include "tokenizer/bpe_trainer.h"

using namespace attnlab;

namespace {

// Every distinct hover text along the strip, left to right.
QStringList hoverTexts(const TokenStrip& strip) {
  QStringList texts;
  for (int x = 0; x < strip.width(); ++x) {
    const QString t = strip.toolTipAt(QPoint(x, strip.height() / 2));
    if (!t.isEmpty() && (texts.isEmpty() || texts.last() != t)) texts << t;
  }
  return texts;
}

}  // namespace

class ProbeTokensTest : public QObject {
  Q_OBJECT
 private slots:
  void subwordTokensShowWithIdsOnHover() {
    auto vocabulary = std::make_shared<Vocabulary>();
    std::string text;
    for (int i = 0; i < 50; ++i) text += "the cat sat on the mat. ";
    QCOMPARE(QString::fromStdString(learnSubwordVocabulary(text, 300, *vocabulary)), QString());

    auto snapshot = std::make_shared<TraceSnapshot>();
    std::string error;
    QVERIFY(vocabulary->encode("the cat", snapshot->trace.tokens, error));
    snapshot->vocabulary = vocabulary;
    snapshot->maxProbeLength = 32;
    AttentionMapModel model;
    model.setTrace(snapshot);
    ProbeEditor editor(&model);
    editor.resize(900, 80);
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));

    const TokenStrip& strip = *editor.tokenStrip();
    QVERIFY(strip.isVisible());
    QCOMPARE(editor.field()->text(), QStringLiteral("the cat"));
    QStringList expected;
    for (int id : snapshot->trace.tokens) expected << QStringLiteral("id %1: %2").arg(id).arg(QString::fromStdString(vocabulary->token(id)));
    QCOMPARE(hoverTexts(strip), expected);
    QVERIFY2(expected.join(' ').contains(QStringLiteral("\u2423cat")), qPrintable(expected.join(' ')));

    QCOMPARE(editor.submit(QStringLiteral("a mat, the dog")), QString());  // any text encodes
    std::vector<int> typed;
    QVERIFY(vocabulary->encode("a mat, the dog", typed, error));
    QCOMPARE(strip.count(), static_cast<int>(typed.size()));
    QVERIFY(hoverTexts(strip).first().startsWith(QStringLiteral("id %1: ").arg(typed[0])));
  }

  void wordVocabulariesShowNoStrip() {
    auto snapshot = std::make_shared<TraceSnapshot>();
    snapshot->vocabulary = std::make_shared<Vocabulary>(std::vector<std::string>{"a", "b"}, Vocabulary::Level::Word);
    snapshot->trace.tokens = {0, 1};
    snapshot->maxProbeLength = 8;
    AttentionMapModel model;
    model.setTrace(snapshot);
    ProbeEditor editor(&model);
    editor.show();
    QVERIFY(!editor.tokenStrip()->isVisible());
  }
};

QTEST_MAIN(ProbeTokensTest)
#include "test_probe_tokens.moc"
