#pragma once
// One head's joint query-key embedding as the 3D view shows it: which glyph goes
// where in which colour, what a point is called, and the lines from a selected query to its top-k
// keys. The input is a plain struct an adapter fills from the analysis result; the model derives
// everything the view draws from it, so the view holds no logic worth testing.
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVector3D>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace attnlab {

struct EmbeddedToken {
  QVector3D point;      // coordinates in the joint 3D projection
  int sequence = 0;     // which probe sequence the token came from
  int position = 0;     // position in that sequence
  std::string token;    // token text
  std::string role;     // the token's role in the task (e.g. "first copy", "repeat"), may be empty
};

struct KeyWeight {
  int key = 0;       // index into QkEmbeddingData::keys
  float weight = 0;  // attention weight of the query on that key
};

struct QkEmbeddingData {
  int layer = 0, head = 0;
  std::vector<EmbeddedToken> queries, keys;
  // Per query (same order as `queries`): the keys it attends to, any order. May be empty.
  std::vector<std::vector<KeyWeight>> attention;
  // Pearson correlation between q.k and the distance between q and k in the embedding.
  double dotDistanceCorrelation = std::numeric_limits<double>::quiet_NaN();
};

class QkEmbeddingModel : public QObject {
  Q_OBJECT
 public:
  enum class ColorBy { Position, Token, Role };
  enum class Kind { Query, Key };
  struct Line {
    int query = 0, key = 0;
    float weight = 0;
    double width = 0;  // relative line width, 1 for weight 0 up to kMaxLineWidth for weight 1
  };
  static constexpr double kMaxLineWidth = 8;
  static constexpr int kMaxTopK = 32;

  using QObject::QObject;

  // Keeps the selected query when the new data has as many queries (the same probe, retraced at a
  // later step), else clears it. Throws std::invalid_argument when `attention` names a key that
  // does not exist or its size differs from the number of queries (when not empty).
  void setData(std::shared_ptr<const QkEmbeddingData> data);
  void setColorBy(ColorBy colorBy);
  void setTopK(int k);                // clamped to [1, kMaxTopK]
  void selectQuery(int query);        // -1 (or out of range) clears the selection

  bool hasData() const { return data_ && (!data_->queries.empty() || !data_->keys.empty()); }
  const QkEmbeddingData* data() const { return data_.get(); }
  ColorBy colorBy() const { return colorBy_; }
  int topK() const { return topK_; }
  int selectedQuery() const { return selected_; }

  int count(Kind kind) const;
  const EmbeddedToken& token(Kind kind, int index) const;
  // What the glyph's colour encodes (the view turns it into a colour): under ColorBy::Position a
  // shade in [0, 1] (position / largest position) and category -1; under Token or Role the index
  // of the token's value in categories() and shade 0.
  double shade(Kind kind, int index) const;
  int category(Kind kind, int index) const;
  QStringList categories() const;  // distinct tokens or roles, sorted; empty under Position
  int maxPosition() const { return maxPosition_; }
  // "query 'b' at position 5 (sequence 2, repeat)".
  QString describe(Kind kind, int index) const;
  // The selected query's k heaviest keys, heaviest first (ties by key index). Empty when none.
  std::vector<Line> selectedLines() const;
  // "q.k vs distance: r = -0.83" or "q.k vs distance: not measured".
  QString correlationText() const;

 signals:
  void dataChanged();       // new points (glyph positions and colours)
  void colorsChanged();     // same points, new colour setting
  void selectionChanged();  // the selected query or k changed

 private:
  void rebuildCategories();
  const std::vector<EmbeddedToken>& tokens(Kind kind) const;

  std::shared_ptr<const QkEmbeddingData> data_;
  ColorBy colorBy_ = ColorBy::Position;
  int topK_ = 5;
  int selected_ = -1;
  int maxPosition_ = 0;
  std::vector<std::string> tokenNames_, roleNames_;  // distinct values, sorted
};

}  // namespace attnlab
