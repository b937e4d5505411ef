#include <QObject>

#include "attention_heatmap_view.h"
#include "circuits_tab.h"
#include "embedding_tab.h"
#include "forward_pass_view.h"
#include "head_table_view.h"
#include "head_view.h"
#include "kv_cache_view.h"
#include "length_view.h"
#include "model_view.h"
#include "next_token_view.h"
#include "spectra_tab.h"
#include "training_view.h"
#include "view_kind.h"

namespace attnlab {

const std::vector<ViewKind>& viewKinds() {
  static const std::vector<ViewKind> kinds = {
      {QStringLiteral("training"), QObject::tr("Training"), QObject::tr("&Training charts"),
       QObject::tr("Loss, accuracy, learning rate, gradient norms and attention entropy over the steps"), QStringLiteral("Training"), false,
       viewFactory<TrainingView>(&TrainingView::settle)},
      {QStringLiteral("attention"), QObject::tr("Attention"), QObject::tr("&Attention heatmap"), QObject::tr("The selected head's attention on the probe as a heatmap"),
       QStringLiteral("Attention (heatmap)"), true, viewFactory<AttentionHeatmapView>()},
      {QStringLiteral("model"), QObject::tr("Model"), QObject::tr("&Model view (all heads)"), QObject::tr("Every layer and head at once; click one to select it"),
       QStringLiteral("Model"), true, viewFactory<ModelView>(&ModelView::settle)},
      {QStringLiteral("heads"), QObject::tr("Head lines"), QObject::tr("&Head view (lines)"), QObject::tr("Lines from each query token to the keys it attends to"),
       QStringLiteral("Head lines"), true, viewFactory<HeadView>()},
      {QStringLiteral("diagnostics"), QObject::tr("Head table"), QObject::tr("Head &table (diagnostics, ablation)"),
       QObject::tr("Every head's diagnostics and importance, head-drop curves; switch heads off"), QStringLiteral("Head table"), true,
       viewFactory<HeadTableView>(&HeadTableView::settle)},
      {QStringLiteral("kv"), QObject::tr("KV cache"), QObject::tr("&KV cache"),
       QObject::tr("Generation through the KV cache: which entries each eviction policy keeps, step by step"), QStringLiteral("KV cache"), true,
       viewFactory<KvCacheView>(&KvCacheView::settle)},
      {QStringLiteral("spectra"), QObject::tr("Spectra"), QObject::tr("&Spectra of W_q^T W_k"),
       QObject::tr("Eigenvalues and singular values of W_q^T W_k per head, over the training snapshots"), QStringLiteral("Spectra"), true,
       viewFactory<SpectraTab>(&SpectraTab::waitForResults)},
      {QStringLiteral("embedding"), QObject::tr("Embedding 3D"), QObject::tr("Query-key &embedding (3D)"),
       QObject::tr("The selected head's queries and keys on the probe, jointly in 3D"), QStringLiteral("Embedding 3D"), true,
       viewFactory<EmbeddingTab>(&EmbeddingTab::waitForResults)},
      {QStringLiteral("circuits"), QObject::tr("Circuits"), QObject::tr("&Circuits (patching, lens, attribution)"),
       QObject::tr("Activation patching of a clean / corrupted prompt pair, logit lens, direct logit attribution, head composition and retrieval heads"), QStringLiteral("Circuits"),
       false, viewFactory<CircuitsTab>(&CircuitsTab::settle)},
      {QStringLiteral("explainer"), QObject::tr("Explainer"), QObject::tr("Forward-pass e&xplainer"),
       QObject::tr("The selected head's computation for one query, stage by stage, with the run's numbers"), QStringLiteral("Explainer (forward pass)"),
       true, viewFactory<ForwardPassView>()},
      {QStringLiteral("predictions"), QObject::tr("Next token"), QObject::tr("&Next token (predictions, generation)"),
       QObject::tr("The distribution of the token after the probe under temperature, top-k and top-p; generate more of the probe"),
       QStringLiteral("Next token"), true, viewFactory<NextTokenView>(&NextTokenView::settle)},
      {QStringLiteral("lengths"), QObject::tr("Lengths"), QObject::tr("&Length extrapolation"),
       QObject::tr("Accuracy and loss on sequences longer than the training length, at multiples of it"), QStringLiteral("Length extrapolation"),
       false, viewFactory<LengthView>(&LengthView::settle)},
  };
  return kinds;
}

QStringList viewKindIds() {
  QStringList ids;
  for (const ViewKind& kind : viewKinds()) ids << kind.id;
  return ids;
}

int viewKindIndex(const QString& id) { return viewKindIds().indexOf(id); }

}  // namespace attnlab
