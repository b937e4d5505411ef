// The query-key embedding model: known points give the known glyph counts, colour keys, names and
// top-k lines; bad input is refused with a clear message.
#include <QSignalSpy>
#include <QtTest>
#include <cmath>
#include <stdexcept>

#include "qk_embedding_model.h"

using namespace attnlab;
using Kind = QkEmbeddingModel::Kind;

namespace {

// Three queries and four keys from one sequence "a b a c" (the queries are positions 1..3).
// Query 2 (position 3) attends to keys 0, 1, 2 with 0.1, 0.6, 0.3.
std::shared_ptr<QkEmbeddingData> smallEmbedding() {
  auto data = std::make_shared<QkEmbeddingData>();
  data->layer = 1;
  data->head = 2;
  const char* tokens[] = {"a", "b", "a", "c"};
  const char* roles[] = {"first", "first", "repeat", "repeat"};
  for (int p = 0; p < 4; ++p)
    data->keys.push_back({QVector3D(p, 0, 0), 0, p, tokens[p], roles[p]});
  for (int p = 1; p < 4; ++p)
    data->queries.push_back({QVector3D(p, 1, 0), 0, p, tokens[p], roles[p]});
  data->attention = {{{0, 0.5f}, {1, 0.5f}}, {{0, 0.2f}, {1, 0.3f}, {2, 0.5f}}, {{0, 0.1f}, {1, 0.6f}, {2, 0.3f}}};
  data->dotDistanceCorrelation = -0.834;
  return data;
}

}  // namespace

class TestQkEmbeddingModel : public QObject {
  Q_OBJECT
 private slots:
  void emptyModelHasNothing() {
    QkEmbeddingModel model;
    QVERIFY(!model.hasData());
    QCOMPARE(model.count(Kind::Query), 0);
    QCOMPARE(model.count(Kind::Key), 0);
    QVERIFY(model.selectedLines().empty());
    QCOMPARE(model.correlationText(), QStringLiteral("q\u00b7k vs distance: not measured"));
  }

  void knownDataGivesKnownGlyphs() {
    QkEmbeddingModel model;
    QSignalSpy changed(&model, &QkEmbeddingModel::dataChanged);
    model.setData(smallEmbedding());
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.count(Kind::Query), 3);
    QCOMPARE(model.count(Kind::Key), 4);
    QCOMPARE(model.token(Kind::Key, 3).point, QVector3D(3, 0, 0));
    QCOMPARE(model.maxPosition(), 3);
    QCOMPARE(model.correlationText(), QStringLiteral("q\u00b7k vs distance: r = -0.83"));
  }

  void colourKeysFollowTheSetting() {
    QkEmbeddingModel model;
    model.setData(smallEmbedding());
    // Position: shade = position / 3; no categories.
    QCOMPARE(model.shade(Kind::Key, 0), 0.0);
    QCOMPARE(model.shade(Kind::Query, 0), 1.0 / 3);
    QCOMPARE(model.shade(Kind::Key, 3), 1.0);
    QCOMPARE(model.category(Kind::Key, 1), -1);
    QVERIFY(model.categories().isEmpty());

    QSignalSpy recoloured(&model, &QkEmbeddingModel::colorsChanged);
    model.setColorBy(QkEmbeddingModel::ColorBy::Token);
    QCOMPARE(recoloured.count(), 1);
    QCOMPARE(model.categories(), QStringList({"a", "b", "c"}));
    QCOMPARE(model.category(Kind::Key, 0), 0);    // a
    QCOMPARE(model.category(Kind::Key, 2), 0);    // a again: same colour
    QCOMPARE(model.category(Kind::Query, 2), 2);  // c
    QCOMPARE(model.shade(Kind::Key, 3), 0.0);

    model.setColorBy(QkEmbeddingModel::ColorBy::Role);
    QCOMPARE(model.categories(), QStringList({"first", "repeat"}));
    QCOMPARE(model.category(Kind::Query, 0), 0);  // position 1: first
    QCOMPARE(model.category(Kind::Query, 1), 1);  // position 2: repeat
    model.setColorBy(QkEmbeddingModel::ColorBy::Role);
    QCOMPARE(recoloured.count(), 2);  // no signal without a change
  }

  void pointsAreNamed() {
    QkEmbeddingModel model;
    model.setData(smallEmbedding());
    QCOMPARE(model.describe(Kind::Query, 1), QStringLiteral("query 'a' at position 2 (sequence 0, repeat)"));
    QCOMPARE(model.describe(Kind::Key, 1), QStringLiteral("key 'b' at position 1 (sequence 0, first)"));
  }

  void selectedQueryGetsItsTopKeys() {
    QkEmbeddingModel model;
    model.setData(smallEmbedding());
    QVERIFY(model.selectedLines().empty());
    QSignalSpy selection(&model, &QkEmbeddingModel::selectionChanged);
    model.selectQuery(2);
    QCOMPARE(selection.count(), 1);
    model.setTopK(2);
    QCOMPARE(selection.count(), 2);
    auto lines = model.selectedLines();
    QCOMPARE(int(lines.size()), 2);
    QCOMPARE(lines[0].key, 1);
    QCOMPARE(lines[0].weight, 0.6f);
    QCOMPARE(lines[1].key, 2);
    QVERIFY(std::abs(lines[0].width - (1 + 7 * 0.6)) < 1e-6);
    QVERIFY(std::abs(lines[1].width - (1 + 7 * 0.3)) < 1e-6);
    QVERIFY(lines[0].width > lines[1].width);

    model.setTopK(10);  // more than the query has: all three, heaviest first
    lines = model.selectedLines();
    QCOMPARE(int(lines.size()), 3);
    QCOMPARE(lines[2].key, 0);

    model.selectQuery(0);  // a tie (0.5, 0.5) resolves by key index
    lines = model.selectedLines();
    QCOMPARE(lines[0].key, 0);
    QCOMPARE(lines[1].key, 1);

    model.selectQuery(7);  // out of range clears
    QCOMPARE(model.selectedQuery(), -1);
    QVERIFY(model.selectedLines().empty());
    model.setTopK(0);
    QCOMPARE(model.topK(), 1);
  }

  void newDataKeepsTheSelectionOfTheSameProbe() {
    QkEmbeddingModel model;
    model.setData(smallEmbedding());
    model.selectQuery(1);
    model.setData(smallEmbedding());  // the same probe at a later step
    QCOMPARE(model.selectedQuery(), 1);
    auto fewer = std::make_shared<QkEmbeddingData>(*smallEmbedding());
    fewer->queries.pop_back();
    fewer->attention.pop_back();
    model.setData(fewer);  // another probe
    QCOMPARE(model.selectedQuery(), -1);
  }

  void badInputIsRefused() {
    QkEmbeddingModel model;
    auto data = smallEmbedding();
    data->attention[1].push_back({9, 0.1f});
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, model.setData(data));
    data = smallEmbedding();
    data->attention.pop_back();
    try {
      model.setData(data);
      QFAIL("a short attention list was accepted");
    } catch (const std::invalid_argument& e) {
      QCOMPARE(QString(e.what()), QStringLiteral("embedding: attention lists 2 queries, the embedding has 3"));
    }
    QVERIFY(!model.hasData());  // a refused input leaves the model as it was
  }
};

QTEST_APPLESS_MAIN(TestQkEmbeddingModel)
#include "test_qk_embedding_model.moc"
