#include "comparison_view_kinds.h"

#include <QLabel>
#include <QObject>

#include "attention_heatmap_view.h"
#include "circuits_tab.h"
#include "embedding_tab.h"
#include "head_table_view.h"
#include "head_view.h"
#include "kv_cache_view.h"
#include "metric_chart_view.h"
#include "model_view.h"
#include "spectra_tab.h"
#include "training_view.h"

namespace attnlab {

const std::vector<ComparisonViewKind>& comparisonViewKinds() {
  // Views on the standard contract take one line each: {id, title, standardViewFactory<XView>()}.
  static const std::vector<ComparisonViewKind> kinds = {
      {QStringLiteral("attention"), QObject::tr("Attention heatmap"),
       [](AttentionMapModel* attention, TrainingSession*, LossHistoryModel*, QWidget* parent) -> QWidget* {
         return new AttentionHeatmapView(attention, parent);
       }},
      {QStringLiteral("training"), QObject::tr("Training charts"),
       [](AttentionMapModel*, TrainingSession*, LossHistoryModel* history, QWidget* parent) -> QWidget* {
         auto* view = new TrainingView(history, parent);
         // A pane is narrower than the main window: smaller charts, and the hint wraps.
         for (QWidget* chart : view->charts()) chart->setMinimumSize(120, 110);
         for (QLabel* label : view->findChildren<QLabel*>()) label->setWordWrap(true);
         return view;
       }},
      {QStringLiteral("model"), QObject::tr("Model view (all heads)"),
       [](AttentionMapModel* attention, TrainingSession*, LossHistoryModel*, QWidget* parent) -> QWidget* {
         return new ModelView(attention, parent);
       }},
      {QStringLiteral("heads"), QObject::tr("Head lines"),
       [](AttentionMapModel* attention, TrainingSession*, LossHistoryModel*, QWidget* parent) -> QWidget* {
         return new HeadView(attention, parent);
       }},
      {QStringLiteral("diagnostics"), QObject::tr("Head table"), standardViewFactory<HeadTableView>()},
      {QStringLiteral("kv"), QObject::tr("KV cache"), standardViewFactory<KvCacheView>()},
      {QStringLiteral("spectra"), QObject::tr("Spectra"), standardViewFactory<SpectraTab>()},
      {QStringLiteral("embedding"), QObject::tr("Embedding 3D"), standardViewFactory<EmbeddingTab>()},
      {QStringLiteral("circuits"), QObject::tr("Circuits"),
       [](AttentionMapModel* attention, TrainingSession*, LossHistoryModel*, QWidget* parent) -> QWidget* {
         return new CircuitsTab(attention, parent);
       }},
  };
  return kinds;
}

QStringList comparisonViewKindIds() {
  QStringList ids;
  for (const ComparisonViewKind& kind : comparisonViewKinds()) ids << kind.id;
  return ids;
}

int comparisonViewKindIndex(const QString& id) { return comparisonViewKindIds().indexOf(id); }

}  // namespace attnlab
