#pragma once
// The probe input every attention view shows: editable text, tokenised with the run's
// vocabulary (from the latest trace) as the user types, or a fresh example drawn from the task.
// Text the vocabulary cannot encode gets an inline message and is not sent.
#include <QWidget>
#include <vector>

class QLabel;
class QLineEdit;
class QPushButton;

namespace attnlab {

class AttentionMapModel;

QString shortenLongWords(const QString& text);  // each word longer than ProbeEditor::kMaxQuotedChars elided

class ProbeEditor : public QWidget {
  Q_OBJECT
 public:
  explicit ProbeEditor(const AttentionMapModel* model, QWidget* parent = nullptr);

  QLineEdit* field() const { return field_; }
  QString message() const;  // what the editor says; a word longer than kMaxQuotedChars is elided
  static constexpr int kMaxQuotedChars = 40;
  // Tokenises `text` as if typed; returns the message shown ("" when it was sent).
  QString submit(const QString& text);

 signals:
  void probeEdited(const std::vector<int>& tokens);
  void drawRequested();

 private:
  void followTrace();
  void showMessage(const QString& text);

  const AttentionMapModel* model_;
  QLineEdit* field_;
  QPushButton* draw_;
  QLabel* message_;
  bool edited_ = false;  // the field holds the user's text, not the traced probe
};

}  // namespace attnlab
