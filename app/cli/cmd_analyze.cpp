// analyze: every registered analysis (engine/analysis/) of a saved model, as text or JSON.
#include <omp.h>

#include <iostream>
#include <sstream>

#include "analysis/analysis.h"
#include "analysis/qk_spectrum.h"
#include "cli_error.h"
#include "command.h"
#include "format.h"
#include "setup.h"

namespace attnlab::cli {
namespace {

std::vector<const AnalysisRegistry::Entry*> chosenAnalyses(const Args& args) {
  const AnalysisRegistry& registry = AnalysisRegistry::instance();
  std::vector<const AnalysisRegistry::Entry*> out;
  if (!args.has("only")) {
    for (const auto& e : registry.entries()) out.push_back(&e);
    return out;
  }
  std::stringstream list(args.text("only"));
  for (std::string name; std::getline(list, name, ',');) {
    const auto* e = registry.find(name);
    if (!e) throw CliError("--only: unknown analysis '" + name + "' (known: " + registry.names() + ")");
    out.push_back(e);
  }
  return out;
}

// Per snapshot and head, the spectrum's summary numbers and eigenvalues (for animation).
Json seriesJson(const std::vector<std::string>& folders) {
  std::vector<std::vector<QkSpectrum>> series;
  if (std::string why = qkSpectrumSeries(folders, series); !why.empty()) throw CliError("--series: " + why);
  Json out = Json::array();
  for (size_t i = 0; i < series.size(); ++i) {
    Json heads = Json::array();
    for (const QkSpectrum& s : series[i]) {
      Json eig = Json::array();
      for (auto l : s.eigenvalues) eig.push_back({l.real(), l.imag()});
      heads.push_back({{"layer", s.layer},
                       {"head", s.head},
                       {"spectral_radius", s.spectral_radius},
                       {"skew_energy_share", s.skew_energy_share},
                       {"henrici", s.henrici},
                       {"imaginary_share", s.imaginary_share},
                       {"eigenvalues", std::move(eig)}});
    }
    out.push_back({{"model", folders[i]}, {"heads", std::move(heads)}});
  }
  return out;
}

int runAnalyze(const Args& args) {
  const auto analyses = chosenAnalyses(args);
  LoadedCheckpoint loaded = openModel(args);
  const ModelConfig& model = loaded.config.model;
  AnalysisOptions options;
  options.layer = static_cast<int>(args.integer("layer", -1, 0, model.n_layers - 1));
  options.head = static_cast<int>(args.integer("head", -1, 0, model.n_heads - 1));
  options.batches = static_cast<int>(args.integer("batches", options.batches, 1, 1000));
  options.seed = static_cast<uint64_t>(args.integer("seed", 1, 0, std::numeric_limits<long long>::max()));
  const int threads = threadsFrom(args, loaded.config.train.threads);
  omp_set_num_threads(threads);
  Eigen::setNbThreads(threads);

  Json results = Json::object();
  for (const auto* e : analyses) {
    try {
      results[e->name] = e->make()->run(*loaded.trainer, options);
    } catch (const std::invalid_argument& error) {
      throw CliError(e->name + ": " + error.what());
    }
  }
  if (args.has("series")) results["qk_spectrum_series"] = seriesJson(args.all("series"));

  if (args.has("json")) {
    std::cout << Json{{"format", "attnlab-analysis-1"}, {"model", args.text("model")}, {"analyses", std::move(results)}}.dump()
              << std::endl;
    return 0;
  }
  for (const auto* e : analyses) std::cout << "== " << e->name << ": " << e->summary << "\n" << e->make()->describe(results[e->name]) << "\n";
  if (args.has("series"))
    std::cout << "== qk_spectrum_series: " << results["qk_spectrum_series"].size() << " snapshots (see --json)\n";
  return 0;
}

}  // namespace

Command analyzeCommand() {
  return {"analyze",
          "--model DIR [--json] [--layer L] [--head H] [--only NAMES] [--batches N] [--seed S] [--series DIR]... [--threads N]",
          "QK spectra, map diagnostics, head importance, joint Q/K embedding and rollout of a saved model",
          {modelFlag(),
           {"json", "", "print one JSON object {format, model, analyses: {name: result}}"},
           {"layer", "L", "only this layer (the embedding's layer; default: all layers, embedding layer 0)"},
           {"head", "H", "only this head (the embedding's head; default: all heads, embedding head 0)"},
           {"only", "NAMES", "comma-separated analyses to run (default: all; see the list below)"},
           {"batches", "N", "validation batches for head importance (default 4)"},
           {"seed", "S", "seed of the validation sample, the random drop order and the Ginibre draw (default 1)"},
           {"series", "DIR", "another checkpoint of the same model: adds the QK spectrum per snapshot (repeatable)", true},
           threadsFlag()},
          [] {
            std::string notes = "Analyses:\n";
            for (const auto& e : AnalysisRegistry::instance().entries()) notes += "  " + e.name + ": " + e.summary + "\n";
            return notes +
                   "Head importance zeroes heads through the model's head mask; nothing is written to the checkpoint.";
          }(),
          runAnalyze};
}

}  // namespace attnlab::cli
