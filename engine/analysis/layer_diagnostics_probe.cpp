#include "analysis/layer_diagnostics_probe.h"

#include <memory>

namespace attnlab {

Trainer::DiagnosticsProbe layerDiagnosticsProbe(const Trainer& trainer) {
  auto probe = std::make_shared<MapDiagnosticsProbe>(trainer.task(), trainer.model().config().vocab, trainer.sequenceLength(),
                                                     kLayerDiagnosticsBatch, kLayerDiagnosticsSeed);
  // The training charts show no effective rank: skipping its decompositions keeps long contexts' steps short.
  return [probe](const Model& model) {
    return layerDiagnosticsOf(MapDiagnosticsProbe::layerMeans(probe->measure(model, EffectiveRank::skipped)));
  };
}

LayerDiagnostics layerDiagnosticsOf(const std::vector<MapDiagnostics>& layerMeans) {
  LayerDiagnostics out;
  for (const MapDiagnostics& d : layerMeans) {
    out.entropy.push_back(d.entropy);
    out.previous_token.push_back(d.previous_token);
    out.induction.push_back(d.induction);
    out.sink.push_back(d.sink);
  }
  return out;
}

}  // namespace attnlab
