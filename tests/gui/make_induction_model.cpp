// Writes a Hugging Face model folder that really has induction heads, for the tour that finds and
// patches GPT-2's induction heads (resources/tours/gpt2_induction.tour): no GPT-2 is downloaded
// in a test, so this trains one. A tiny Llama folder (tests/tiny_hf_folder.h) gives the
// architecture as the loader reads it; the lab trains its attention layers from scratch on the
// induction task with dealt prefixes (with '_' pads the pads' count announced the repeat's offset,
// and models learned that shortcut instead of induction), and export-hf's writer stores the model
// in the Llama layout with every MLP weight zero, so the MLPs add exactly nothing.
// Why not GPT-2's own layout: its learned absolute positions must learn "one place back" for
// every position before an induction head can use it. Measured here (dealt prefixes, 1 thread):
// the induction preset with learned positions had no head above 0.15 after 1000 steps, and a
// GPT-2-shaped model with its MLPs none above 0.2 after 2500, while with RoPE (the relation comes
// free) a head passes 0.5 within about 350 steps. It stops once a head's induction score reaches
// kEnough (or at STEPS) and writes nothing when no head reached kWorthWriting.
//   make_induction_model OUTDIR [STEPS]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "../tiny_hf_folder.h"
#include "analysis/map_diagnostics.h"
#include "data/task.h"
#include "hf/hf_export.h"
#include "hf/hf_model.h"
#include "train/trainer.h"

namespace {

// Context 31, the induction preset's sequence length (halves of up to 16 tokens; with 21 no head
// formed within 600 steps, measured): the tour's probe and the head table's random repeats on an
// opened model ([t0, r, r] with |r| = 15 here) fit it, so every position they use was trained.
constexpr int kLayers = 2, kHeads = 4, kWidth = 64, kContext = 31;
constexpr int kSymbols = 32;  // more than a half holds, so a half is never a full deck
constexpr int kCheckEvery = 50;
constexpr double kEnough = 0.5, kWorthWriting = 0.4;

struct BestHead {
  double score = 0;
  int layer = 0, head = 0;
};

BestHead strongestInductionHead(attnlab::MapDiagnosticsProbe& probe, const attnlab::Model& model) {
  BestHead best;
  const auto heads = probe.measure(model);
  for (size_t l = 0; l < heads.size(); ++l)
    for (size_t h = 0; h < heads[l].size(); ++h)
      if (heads[l][h].induction > best.score) best = {heads[l][h].induction, int(l) + 1, int(h) + 1};
  return best;
}

// The folder's model with the trained attention-only weights, and zero in every MLP weight (a
// SwiGLU with a zero down projection outputs exactly zero). Returns "" or what did not fit.
std::string copyIntoFolderModel(const attnlab::Model& trained, attnlab::Model& folder) {
  for (const auto& p : folder.params().all())
    if (p->name.find(".mlp.") != std::string::npos) p->value.setZero();
  for (const auto& p : trained.params().all()) {
    attnlab::Param* target = folder.params().find(p->name);
    if (!target || target->shape != p->shape) return "the folder's model has no tensor " + p->name + " of that shape";
    target->value = p->value;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: make_induction_model OUTDIR [STEPS]\n"), 2;
  const std::filesystem::path out = argv[1];
  const int steps = argc > 2 ? std::atoi(argv[2]) : 1000;
  if (steps <= 0) return std::fprintf(stderr, "make_induction_model: STEPS must be a positive whole number\n"), 2;
  const std::filesystem::path shape = out.string() + ".shape";
  std::filesystem::remove_all(shape);
  std::filesystem::remove_all(out);
  // The task's vocabulary: the symbols and its '_' (no tokenizer: the app labels ids by number).
  if (std::string why = tiny_hf::writeLlamaFolder(shape, kLayers, kHeads, kHeads, kWidth, kContext, kSymbols + 1); !why.empty())
    return std::fprintf(stderr, "make_induction_model: %s\n", why.c_str()), 1;
  std::unique_ptr<attnlab::Model> folderModel;
  attnlab::hf::HfModelInfo info;
  if (std::string why = attnlab::hf::openHfModel(shape.string(), folderModel, info); !why.empty())
    return std::fprintf(stderr, "make_induction_model: %s\n", why.c_str()), 1;

  attnlab::ExperimentConfig config;
  config.model = info.config;  // the folder's architecture, as opening it builds it, without the MLPs
  config.model.attention_only = true;
  config.task.name = "induction";
  config.task.settings["length"] = (kContext + 1) / 2;  // sequences of kContext tokens
  config.task.settings["symbols"] = kSymbols;
  config.task.settings["dealt_prefix"] = 1;
  config.train.steps = steps;
  config.train.batch = 64;
  config.train.lr = 3e-3;
  config.train.warmup = 50;
  config.train.eval_every = 0;
  config.train.threads = 1;
  config.train.seed = 1;
  attnlab::Trainer trainer(config);
  std::string error;
  const std::unique_ptr<attnlab::Task> task = attnlab::makeTask(config.task, error);
  if (!task) return std::fprintf(stderr, "make_induction_model: %s\n", error.c_str()), 1;
  attnlab::MapDiagnosticsProbe probe(*task, config.model.vocab, trainer.sequenceLength(), 8, 7);
  attnlab::TrainPoint last;
  BestHead best;
  while (!trainer.finished()) {
    last = trainer.trainStep();
    if (last.step % kCheckEvery != 0 && !trainer.finished()) continue;
    best = strongestInductionHead(probe, trainer.model());
    std::printf("step %d: loss %.3f, strongest induction head layer %d head %d, score %.2f\n", last.step, last.loss, best.layer,
                best.head, best.score);
    std::fflush(stdout);
    if (best.score >= kEnough) break;
  }
  if (best.score < kWorthWriting)
    return std::fprintf(stderr, "make_induction_model: no induction head formed in %d steps (best score %.2f)\n", last.step, best.score), 1;
  if (std::string why = copyIntoFolderModel(trainer.model(), *folderModel); !why.empty())
    return std::fprintf(stderr, "make_induction_model: %s\n", why.c_str()), 1;
  const BestHead stored = strongestInductionHead(probe, *folderModel);
  if (std::abs(stored.score - best.score) > 1e-4)
    return std::fprintf(stderr, "make_induction_model: the zeroed MLPs changed the induction score (%.4f, trained %.4f)\n", stored.score,
                        best.score),
           1;
  if (std::string why = attnlab::hf::exportHfModel(*folderModel, info, out.string()); !why.empty())
    return std::fprintf(stderr, "make_induction_model: %s\n", why.c_str()), 1;
  std::filesystem::remove_all(shape);
  std::printf("wrote %s after %d steps\n", out.c_str(), last.step);
  return 0;
}
