#pragma once
// The Circuits tab: causal interpretability of the shown model on a clean / corrupted prompt pair.
// A prompt pair editor (same-length check, "swap a token" helper, answer and wrong token pickers),
// activation patching as a layer x position / layer x head heatmap (hover for values, click to
// select that layer and head in every view), the clean prompt's logit lens as a table coloured by
// probability, direct logit attribution as a sorted bar chart, and head composition as a graph of
// heads (Q/K/V kind and a score threshold to choose the edges; click a head to select it). The
// sweep runs on a worker with a progress bar and Cancel (models/circuits_model.h). Retrieval heads:
// each head's retrieval score as a layer x head table, and the answer accuracy with the top k heads,
// k random heads, the top heads' lowest RoPE pairs or every head's RoPE phase knocked out (on a lab
// run's validation sample, or passkey prompts in an opened model's tokenizer).
#include <QWidget>

#include "view_context.h"
#include "view_export.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

class QChartView;

namespace attnlab {

class AttentionMapModel;
class CircuitsModel;
class CompositionGraph;
class HeadSelection;
class PatchingMap;
class Vocabulary;

class CircuitsTab : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  CircuitsTab(const ViewContext& context, QWidget* parent = nullptr);

  CircuitsModel* model() const { return model_; }
  // Fills the pair and runs (tests, screenshots); returns "" or the reason it cannot run.
  // Empty answer / wrong: the runs' top predictions.
  // Runs the retrieval study with k heads knocked out; "" or why it cannot run.
  QString runRetrieval(int k);
  QString runPair(const QString& clean, const QString& corrupt, const QString& site, const QString& answer = {},
                  const QString& wrong = {});
  // Before a capture: with no result yet, patches the probe against itself with one token swapped
  // (the "swap" helper at the middle position), then finds the retrieval heads; waits for both.
  void settle();

  QString exportName() const override { return QStringLiteral("circuits"); }
  QWidget* exportWidget() override { return this; }
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;

 protected:
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  void followTrace();
  QString checkPair(std::vector<int>* clean, std::vector<int>* corrupt) const;  // "" when runnable
  void updateCheck(bool showStatus = true);
  void swapToken();
  void run();
  void showResults();
  void showLens();
  void showDla();
  void showComposition();
  void showRetrieval();
  QWidget* retrievalPane();
  int pickedToken(const QComboBox* box) const;  // -1: the run's top prediction

  AttentionMapModel* attention_;
  HeadSelection* selection_;
  CircuitsModel* model_;
  const Vocabulary* vocabulary_ = nullptr;
  QLineEdit *clean_, *corrupt_;
  QSpinBox* swapPosition_;
  QComboBox *answer_, *wrong_, *site_;
  QCheckBox* perPosition_;
  QPushButton *run_, *cancel_;
  QProgressBar* progress_;
  QLabel* status_;
  PatchingMap* map_;
  QTableWidget* lens_;
  QChartView* dla_;
  CompositionGraph* graph_;
  QComboBox* compositionKind_;
  QDoubleSpinBox* threshold_;
  QPushButton* retrievalRun_;
  QSpinBox* retrievalK_;
  QLabel* retrievalStatus_;
  QTableWidget* retrieval_;
  bool retrievalLast_ = false;  // the latest job is the retrieval study (its failures go to its pane)
  const void* lastComposition_ = nullptr;  // the composition the threshold was last set for
};

}  // namespace attnlab
