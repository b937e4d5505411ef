#pragma once
// Next-token predictions for the probe (NextTokenModel): the distribution of the token after the
// selected query (else the probe's last token) under a temperature, top-k and top-p, as a table
// of the most likely tokens with their renormalised and full probabilities; and Generate, which
// appends greedy or sampled tokens to the probe on a worker, a few at a time, with Cancel.
#include <QWidget>

#include "view_context.h"
#include "view_export.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace attnlab {

class AttentionMapModel;
class NextTokenModel;

class NextTokenView : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  static constexpr int kShownRows = 25;

  NextTokenView(const ViewContext& context, QWidget* parent = nullptr);

  NextTokenModel* model() const { return model_; }
  QTableWidget* table() const { return table_; }
  QDoubleSpinBox* temperature() const { return temperature_; }
  QSpinBox* topK() const { return topK_; }
  QDoubleSpinBox* topP() const { return topP_; }
  QSpinBox* tokens() const { return tokens_; }
  QComboBox* decoding() const { return decoding_; }
  QSpinBox* seed() const { return seed_; }
  QPushButton* generateButton() const { return generate_; }
  QPushButton* cancelButton() const { return cancel_; }
  QString summary() const;
  void settle();  // blocks until the distribution (and a running generation) is shown

  QString exportName() const override { return QStringLiteral("next-token"); }
  QWidget* exportWidget() override { return this; }
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;

 protected:
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  void applySettings();
  void showPrediction();
  void showGeneration();
  void startGeneration();

  AttentionMapModel* attention_;
  NextTokenModel* model_;
  QLabel* caption_;
  QDoubleSpinBox* temperature_;
  QSpinBox* topK_;
  QDoubleSpinBox* topP_;
  QLabel* summary_;
  QTableWidget* table_;
  QSpinBox* tokens_;
  QComboBox* decoding_;
  QSpinBox* seed_;
  QPushButton* generate_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QLabel* status_;
};

}  // namespace attnlab
