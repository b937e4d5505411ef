#pragma once
// The per-layer diagnostics a run records at each validation step (train/layer_diagnostics.h):
// a MapDiagnosticsProbe drawn once from the run's task with a fixed seed, so every step is
// measured on the same sequences and the curves show the model changing, not the sample.
#include <cstdint>
#include <vector>

#include "analysis/map_diagnostics.h"
#include "train/trainer.h"

namespace attnlab {

constexpr int kLayerDiagnosticsBatch = 8;
constexpr uint64_t kLayerDiagnosticsSeed = 7;

// The probe for `trainer`'s task and shape; Trainer::setDiagnosticsProbe takes it.
Trainer::DiagnosticsProbe layerDiagnosticsProbe(const Trainer& trainer);
// Entropy, previous-token, induction and sink of each layer's mean (MapDiagnosticsProbe::layerMeans).
LayerDiagnostics layerDiagnosticsOf(const std::vector<MapDiagnostics>& layerMeans);

}  // namespace attnlab
