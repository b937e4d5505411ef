#include "view_state_keeper.h"

#include <QComboBox>
#include <QLineEdit>
#include <QStatusBar>
#include <memory>

#include "attention_map_model.h"
#include "experiment_files.h"
#include "head_selection.h"
#include "io/view_state.h"
#include "kv_cache_view.h"
#include "main_window.h"
#include "train/trainer.h"

namespace attnlab {

ViewStateKeeper::ViewStateKeeper(MainWindow& window) : QObject(&window), window_(window) {
  connect(&window_.files(), &ExperimentFiles::savedTo, this, [this](const QString& dir) {
    if (const std::string why = writeViewState(dir.toStdString(), capture()); !why.empty())
      window_.statusBar()->showMessage(tr("Saved, but not the view settings: %1").arg(QString::fromStdString(why)), 8000);
  });
  connect(&window_.files(), &ExperimentFiles::opened, this, [this](const ExperimentConfig&, const QString& dir) { restore(dir); });
}

ViewState ViewStateKeeper::capture() const {
  ViewState state;
  state.view = viewKinds().at(window_.currentView()).id.toStdString();
  if (const TraceSnapshot* shown = window_.attentionMap().snapshot()) state.probe = shown->trace.tokens;
  state.layer = window_.selection().layer();
  state.head = window_.selection().head();
  state.logColours = window_.attentionMap().colourScale() == AttentionMapModel::ColourScale::Log;
  if (const KvCacheView* kv = window_.view<KvCacheView>()) {
    state.policy = kv->findChild<QComboBox*>(QStringLiteral("kvPolicy"))->currentText().toStdString();
    state.budget = kv->findChild<QLineEdit*>(QStringLiteral("kvBudget"))->text().trimmed().toStdString();
  }
  return state;
}

void ViewStateKeeper::restore(const QString& dir) {
  ViewState state;
  bool found = false;
  if (const std::string why = readViewState(dir.toStdString(), state, found); !why.empty()) {
    window_.statusBar()->showMessage(tr("Opened without its view settings: %1").arg(QString::fromStdString(why)), 8000);
    return;
  }
  if (!found) return;
  if (const int view = viewKindIndex(QString::fromStdString(state.view)); view >= 0) window_.showView(view);
  window_.attentionMap().setColourScale(state.logColours ? AttentionMapModel::ColourScale::Log : AttentionMapModel::ColourScale::Linear);
  if (KvCacheView* kv = window_.view<KvCacheView>(); kv && !state.policy.empty())
    kv->setEviction(QString::fromStdString(state.policy), QString::fromStdString(state.budget));
  const ModelConfig& shape = window_.config().model;
  const bool probeFits = !state.probe.empty() && static_cast<int>(state.probe.size()) <= shape.context &&
                         std::all_of(state.probe.begin(), state.probe.end(), [&](int id) { return id >= 0 && id < shape.vocab; });
  if (probeFits) window_.session().setProbe(state.probe);
  // The selection applies to a map: once the opened run's first one is shown.
  auto once = std::make_shared<QMetaObject::Connection>();
  AttentionMapModel& map = window_.attentionMap();
  *once = connect(&map, &AttentionMapModel::mapChanged, this, [this, &map, once, state] {
    if (!map.hasMap()) return;
    QObject::disconnect(*once);
    window_.selection().select(state.layer, state.head);
  });
}

}  // namespace attnlab
