#pragma once
// The probe input every attention view shows: editable text, tokenised with the run's
// vocabulary (from the latest trace) as the user types, or a fresh example drawn from the task.
// Text the vocabulary cannot encode gets an inline message and is not sent. With a subword
// vocabulary the tokens are shown under the field (TokenStrip), their ids on hover.
#include <QWidget>
#include <vector>

#include "quoted_text.h"

class QLabel;
class QLineEdit;
class QPushButton;

namespace attnlab {

class AttentionMapModel;
class TokenStrip;
struct TraceSnapshot;

class ProbeEditor : public QWidget {
  Q_OBJECT
 public:
  explicit ProbeEditor(const AttentionMapModel* model, QWidget* parent = nullptr);

  QLineEdit* field() const { return field_; }
  const TokenStrip* tokenStrip() const { return strip_; }
  QString message() const;  // what the editor says; a word longer than kMaxQuotedChars is elided (shortenLongWords)
  // Tokenises `text` as if typed; returns the message shown ("" when it was sent).
  QString submit(const QString& text);

 signals:
  void probeEdited(const std::vector<int>& tokens);
  void drawRequested();

 private:
  void followTrace();
  void showMessage(const QString& text);
  void showTokens(const TraceSnapshot& snapshot, const std::vector<int>& tokens);

  const AttentionMapModel* model_;
  QLineEdit* field_;
  QPushButton* draw_;
  QLabel* message_;
  TokenStrip* strip_;
  bool edited_ = false;  // the field holds the user's text, not the traced probe
};

}  // namespace attnlab
