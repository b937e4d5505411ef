#pragma once
// A comparison of two to four experiments saved as one JSON file (".attnlab-compare"): each run's
// configuration and, when it was trained, the checkpoint folder holding its weights (a path
// relative to the file), or the model folder it opened, plus what the comparison window showed (view kind, grid columns, how
// the runs train, the shared probe, the selected head, the eviction setting of the metrics).
// Reading checks everything before anything is used, so a corrupt file changes nothing.
#include <string>
#include <vector>

#include "experiment/experiment_config.h"

namespace attnlab {

struct ComparisonRun {
  ExperimentConfig config;
  std::string checkpoint;  // folder relative to the file; "" when the run was never trained
  // A Hugging Face model folder the run opens instead (absolute, or relative to the file); the
  // folder is the user's own and is not copied. "" for a run that trains its configuration.
  std::string model_folder;
};

struct ComparisonDocument {
  static constexpr int kMinRuns = 2, kMaxRuns = 4;
  std::vector<ComparisonRun> runs;
  std::string view = "attention";  // a comparison view kind id
  int columns = 2;                 // panes per row of the grid
  bool oneAfterAnother = false;    // else the runs train concurrently
  std::vector<int> probe;          // shared probe token ids; empty: each run's own
  int layer = 0, head = 0;         // the linked selection (0-based)
  std::string policy = "h2o";      // eviction policy of the metrics table
  std::string budget = "16";       // its budget as parseBudget reads it ("16", "25%")
};

std::string comparisonToJson(const ComparisonDocument& document);
// Returns "" and fills `out`, or a one-line reason (not JSON, another format, a bad run config).
std::string comparisonFromJson(const std::string& text, ComparisonDocument& out);

// Whole-file helpers: the write is atomic (temporary file + rename).
std::string writeComparisonFile(const std::string& path, const ComparisonDocument& document);
std::string readComparisonFile(const std::string& path, ComparisonDocument& out);

}  // namespace attnlab
