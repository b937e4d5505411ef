#include "qk_embedding_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attnlab {

namespace {

int indexOf(const std::vector<std::string>& sorted, const std::string& value) {
  return static_cast<int>(std::lower_bound(sorted.begin(), sorted.end(), value) - sorted.begin());
}

std::vector<std::string> distinctSorted(std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

// Blanks and line breaks made visible, as in the heatmap's labels.
QString visibleText(const std::string& token) {
  QString text = QString::fromStdString(token);
  text.replace(QLatin1Char(' '), QChar(0x2423));
  text.replace(QLatin1Char('\n'), QChar(0x21b5));
  return text;
}

}  // namespace

void QkEmbeddingModel::setData(std::shared_ptr<const QkEmbeddingData> data) {
  if (data) {
    const int keys = static_cast<int>(data->keys.size());
    if (!data->attention.empty() && data->attention.size() != data->queries.size())
      throw std::invalid_argument("embedding: attention lists " + std::to_string(data->attention.size()) +
                                  " queries, the embedding has " + std::to_string(data->queries.size()));
    for (const auto& row : data->attention)
      for (const KeyWeight& kw : row)
        if (kw.key < 0 || kw.key >= keys)
          throw std::invalid_argument("embedding: attention names key " + std::to_string(kw.key) + " of " +
                                      std::to_string(keys));
  }
  const int queries = count(Kind::Query);
  data_ = std::move(data);
  if (count(Kind::Query) != queries) selected_ = -1;
  rebuildCategories();
  emit dataChanged();
  emit selectionChanged();
}

void QkEmbeddingModel::rebuildCategories() {
  std::vector<std::string> tokens, roles;
  maxPosition_ = 0;
  if (data_)
    for (const auto* set : {&data_->queries, &data_->keys})
      for (const EmbeddedToken& t : *set) {
        tokens.push_back(t.token);
        roles.push_back(t.role);
        maxPosition_ = std::max(maxPosition_, t.position);
      }
  tokenNames_ = distinctSorted(std::move(tokens));
  roleNames_ = distinctSorted(std::move(roles));
}

void QkEmbeddingModel::setColorBy(ColorBy colorBy) {
  if (colorBy == colorBy_) return;
  colorBy_ = colorBy;
  emit colorsChanged();
}

void QkEmbeddingModel::setTopK(int k) {
  k = std::clamp(k, 1, kMaxTopK);
  if (k == topK_) return;
  topK_ = k;
  emit selectionChanged();
}

void QkEmbeddingModel::selectQuery(int query) {
  if (query < 0 || query >= count(Kind::Query)) query = -1;
  if (query == selected_) return;
  selected_ = query;
  emit selectionChanged();
}

const std::vector<EmbeddedToken>& QkEmbeddingModel::tokens(Kind kind) const {
  return kind == Kind::Query ? data_->queries : data_->keys;
}

int QkEmbeddingModel::count(Kind kind) const { return data_ ? static_cast<int>(tokens(kind).size()) : 0; }

const EmbeddedToken& QkEmbeddingModel::token(Kind kind, int index) const { return tokens(kind).at(index); }

double QkEmbeddingModel::shade(Kind kind, int index) const {
  if (colorBy_ != ColorBy::Position) return 0;
  return maxPosition_ > 0 ? double(token(kind, index).position) / maxPosition_ : 0;
}

int QkEmbeddingModel::category(Kind kind, int index) const {
  switch (colorBy_) {
    case ColorBy::Token: return indexOf(tokenNames_, token(kind, index).token);
    case ColorBy::Role: return indexOf(roleNames_, token(kind, index).role);
    case ColorBy::Position: break;
  }
  return -1;
}

QStringList QkEmbeddingModel::categories() const {
  QStringList names;
  if (colorBy_ == ColorBy::Position) return names;
  for (const std::string& name : colorBy_ == ColorBy::Token ? tokenNames_ : roleNames_)
    names << (colorBy_ == ColorBy::Token ? visibleText(name) : QString::fromStdString(name.empty() ? "(none)" : name));
  return names;
}

QString QkEmbeddingModel::describe(Kind kind, int index) const {
  const EmbeddedToken& t = token(kind, index);
  QString text = QStringLiteral("%1 '%2' at position %3 (sequence %4")
                     .arg(kind == Kind::Query ? QStringLiteral("query") : QStringLiteral("key"), visibleText(t.token))
                     .arg(t.position)
                     .arg(t.sequence);
  if (!t.role.empty()) text += QStringLiteral(", ") + QString::fromStdString(t.role);
  return text + QLatin1Char(')');
}

std::vector<QkEmbeddingModel::Line> QkEmbeddingModel::selectedLines() const {
  std::vector<Line> lines;
  if (selected_ < 0 || data_->attention.empty()) return lines;
  for (const KeyWeight& kw : data_->attention[selected_])
    lines.push_back({selected_, kw.key, kw.weight, 1 + (kMaxLineWidth - 1) * std::clamp(double(kw.weight), 0.0, 1.0)});
  std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return a.weight != b.weight ? a.weight > b.weight : a.key < b.key;
  });
  if (static_cast<int>(lines.size()) > topK_) lines.resize(topK_);
  return lines;
}

QString QkEmbeddingModel::correlationText() const {
  const double r = data_ ? data_->dotDistanceCorrelation : std::nan("");
  if (!std::isfinite(r)) return QStringLiteral("q\u00b7k vs distance: not measured");
  return QStringLiteral("q\u00b7k vs distance: r = %1").arg(r, 0, 'f', 2);
}

}  // namespace attnlab
