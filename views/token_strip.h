#pragma once
// The probe's subword tokens drawn as chips under the probe field (a leading space shown as ␣),
// each chip's id and token on hover. Shown only for subword vocabularies, where the split of the
// text into tokens is not obvious from the text itself.
#include <QWidget>
#include <memory>
#include <vector>

namespace attnlab {

class Vocabulary;

class TokenStrip : public QWidget {
  Q_OBJECT
 public:
  explicit TokenStrip(QWidget* parent = nullptr);

  void setTokens(std::shared_ptr<const Vocabulary> vocabulary, std::vector<int> tokens);
  int count() const { return static_cast<int>(tokens_.size()); }
  // The hover text at `pos` (widget coordinates): "id 995: ␣world", or "" between chips.
  QString toolTipAt(const QPoint& pos) const;
  QSize sizeHint() const override;

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;

 private:
  QString label(int index) const;
  QRect chipRect(int index) const;  // chips laid out left to right; those past the width are not drawn

  std::shared_ptr<const Vocabulary> vocabulary_;
  std::vector<int> tokens_;
  std::vector<int> lefts_;  // x of each chip, from the labels' widths
};

}  // namespace attnlab
