// Writes a GPT-2-layout model folder that really has induction heads, for the tour that finds
// and patches GPT-2's induction heads (resources/tours/gpt2_induction.tour): no GPT-2 is
// downloaded in a test, so this trains one. A tiny GPT-2 folder (tests/tiny_hf_folder.h) gives
// the architecture exactly as the loader reads it (LayerNorm, GELU MLP, learned positions, tied
// head); the lab trains a model of that configuration from scratch on its induction task
// (repeated random sequences), and export-hf's writer puts it back in GPT-2's tensor layout.
//   make_induction_gpt2 OUTDIR [STEPS [LR [BATCH]]]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "../tiny_hf_folder.h"
#include "hf/hf_export.h"
#include "analysis/map_diagnostics.h"
#include "data/task.h"
#include "hf/hf_model.h"
#include "train/trainer.h"

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: make_induction_gpt2 OUTDIR [STEPS [LR [BATCH]]]\n"), 2;
  const std::filesystem::path out = argv[1];
  const int steps = argc > 2 ? std::atoi(argv[2]) : 400;
  const std::filesystem::path shape = out.string() + ".shape";
  std::filesystem::remove_all(shape);
  std::filesystem::remove_all(out);
  // The induction task's vocabulary: 32 symbols and its separator (no tokenizer: ids are labelled by number).
  constexpr int kSymbols = 32;
  if (std::string why = tiny_hf::writeGpt2Folder(shape, /*layers=*/2, /*heads=*/4, /*width=*/64, /*context=*/64, kSymbols + 1); !why.empty())
    return std::fprintf(stderr, "make_induction_gpt2: %s\n", why.c_str()), 1;
  std::unique_ptr<attnlab::Model> random;
  attnlab::hf::HfModelInfo info;
  if (std::string why = attnlab::hf::openHfModel(shape.string(), random, info); !why.empty())
    return std::fprintf(stderr, "make_induction_gpt2: %s\n", why.c_str()), 1;

  attnlab::ExperimentConfig config;
  config.model = info.config;  // GPT-2's architecture, as opening the folder builds it
  config.task.name = "induction";
  config.task.settings["length"] = 16;
  config.task.settings["symbols"] = kSymbols;
  config.train.steps = steps;
  config.train.batch = argc > 4 ? std::atoi(argv[4]) : 32;
  config.train.lr = argc > 3 ? std::atof(argv[3]) : 3e-3;
  config.train.warmup = 50;
  config.train.eval_every = 0;
  config.train.threads = 1;
  attnlab::Trainer trainer(config);
  attnlab::TrainPoint last;
  while (!trainer.finished()) last = trainer.trainStep();
  std::printf("trained GPT-2-shaped model %d steps: loss %.3f, validation %.3f, accuracy %.1f%%\n", last.step, last.loss,
              last.val_loss, 100 * last.accuracy);
  // The head table's induction score on the lab's own probe: the folder is only worth writing
  // if a head really does induction.
  std::string error;
  const std::unique_ptr<attnlab::Task> task = attnlab::makeTask(config.task, error);
  attnlab::MapDiagnosticsProbe probe(*task, config.model.vocab, trainer.sequenceLength(), 8, 7);
  double best = 0;
  int bestLayer = 0, bestHead = 0;
  const auto heads = probe.measure(trainer.model());
  for (size_t l = 0; l < heads.size(); ++l)
    for (size_t h = 0; h < heads[l].size(); ++h)
      if (heads[l][h].induction > best) best = heads[l][h].induction, bestLayer = int(l) + 1, bestHead = int(h) + 1;
  std::printf("strongest induction head: layer %d head %d, score %.2f\n", bestLayer, bestHead, best);
  if (best < 0.4) return std::fprintf(stderr, "make_induction_gpt2: no induction head formed (best score %.2f): train more steps\n", best), 1;
  if (std::string why = attnlab::hf::exportHfModel(trainer.model(), info, out.string()); !why.empty())
    return std::fprintf(stderr, "make_induction_gpt2: %s\n", why.c_str()), 1;
  std::filesystem::remove_all(shape);
  std::printf("wrote %s\n", out.c_str());
  return 0;
}
