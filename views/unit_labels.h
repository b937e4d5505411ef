#pragma once
// How the window names layers and heads: counted from 1, as the selection bar, the heatmap title
// and the head view show them. The engine, the CLI and every CSV count from 0, so labels are made
// here, at the edge, from the engine's 0-based indices.
#include <QCoreApplication>
#include <QString>

#include "interpret/direct_logit_attribution.h"

namespace attnlab {

inline QString layerLabel(int layer) { return QCoreApplication::translate("attnlab", "layer %1").arg(layer + 1); }
inline QString headLabel(int head) { return QStringLiteral("H%1").arg(head + 1); }
inline QString headName(int layer, int head) { return QStringLiteral("L%1H%2").arg(layer + 1).arg(head + 1); }
// The residual stream entering block `index` (0-based): the embeddings, then each block's output;
// index n_layers is the stream after the last block.
inline QString streamLabel(int index) {
  return index == 0 ? QCoreApplication::translate("attnlab", "embeddings")
                    : QCoreApplication::translate("attnlab", "after layer %1").arg(index);
}
// A direct-logit-attribution term ("L0H3", "mlp 1 bias", ...) with its layer and head counted from 1.
QString dlaTermLabel(const DlaTerm& term);

}  // namespace attnlab
