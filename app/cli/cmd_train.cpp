// train: builds an experiment, trains it, and saves the checkpoint folder.
#include <unistd.h>

#include <filesystem>

#include "cli_error.h"
#include "command.h"
#include "interrupt.h"
#include "io/checkpoint.h"
#include "setup.h"
#include "train_report.h"

namespace attnlab::cli {
namespace {

constexpr int kAutosaveEvery = 500;

namespace fs = std::filesystem;

// Refuses a bad --out before training rather than after it: the folder must be absent, empty,
// or a previous checkpoint (the engine replaces only those), and its parent must be writable.
void checkOutputFolder(const std::string& dir) {
  std::error_code ec;
  fs::path path = fs::absolute(fs::path(dir), ec);
  if (!path.has_filename()) path = path.parent_path();  // "runs/a/" names the folder "runs/a"
  const fs::file_status status = fs::status(path, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) throw CliError(dir + ": exists and is not a folder");
    if (!fs::is_empty(path, ec) && !fs::exists(path / "config.json", ec))
      throw CliError(dir + ": exists and is not an attnlab checkpoint (no config.json); choose another --out");
  }
  const fs::path parent = path.parent_path();
  fs::create_directories(parent, ec);  // the save would create it anyway; failing now saves a wasted run
  if (ec) throw CliError(parent.string() + ": cannot create the folder (" + ec.message() + ")");
  if (access(parent.c_str(), W_OK) != 0) throw CliError(parent.string() + ": not writable");
}

void save(const std::string& dir, const Trainer& trainer) {
  if (std::string why = saveCheckpoint(dir, trainer); !why.empty())
    throw CliError("cannot save the checkpoint: " + why, 1);
}

int runTrain(const Args& args) {
  const ExperimentConfig config = experimentFromFlags(args);
  const std::string out = args.required("out");
  checkOutputFolder(out);
  Trainer trainer(config);
  TrainReport report(config.train.steps, args.has("json"), args.has("quiet"));
  const InterruptGuard interrupt;
  int lastAutosave = 0;
  while (!trainer.finished() && !interrupt.requested()) {
    try {
      report.onStep(trainer.trainStep());
    } catch (const DivergenceError& e) {
      report.onDiverged(e.what(), trainer.stepsDone());
      const std::string kept =
          lastAutosave > 0 ? " (" + out + " keeps the autosave of step " + std::to_string(lastAutosave) + ")" : "";
      throw CliError(std::string(e.what()) + "; nothing saved" + kept, kExitDiverged);
    }
    if (trainer.stepsDone() % kAutosaveEvery == 0 && !trainer.finished()) {
      save(out, trainer);
      lastAutosave = trainer.stepsDone();
    }
  }
  if (trainer.stepsDone() == 0)  // an untrained model must not replace a checkpoint already at --out
    throw CliError("stopped by Ctrl-C before the first step; nothing saved", kExitInterrupted);
  save(out, trainer);
  report.onFinished(trainer.evaluate(), out, interrupt.requested());
  return interrupt.requested() ? kExitInterrupted : 0;
}

}  // namespace

Command trainCommand() {
  std::vector<FlagSpec> flags = experimentFlags();
  flags.push_back({"out", "DIR", "checkpoint folder to write (config.json, model.safetensors, history.csv)"});
  flags.push_back({"json", "", "stdout: one JSON object per evaluation, then a final {\"event\":\"final\", ...} line"});
  flags.push_back({"quiet", "", "no progress bar and no per-evaluation output; only the final result"});
  const std::string autosave =
      "The checkpoint is saved at the end and every " + std::to_string(kAutosaveEvery) + " steps.\n";
  const std::string notes =
      "The config is the preset or file, then each --set in order, then --steps, --seed and --threads.\n"
      "A progress bar (step, loss, val loss, accuracy, tokens/s, ETA) is drawn on stderr when it is a terminal.\n" +
      autosave +
      "If training diverges (NaN/Inf) nothing new is saved, so the last autosave stays; exit code 3.\n"
      "Ctrl-C stops after the current step, saves, prints the final metrics and exits with 130.";
  return {"train",
          "(--preset NAME | --config FILE) [--set KEY=VALUE]... [--steps N] [--seed S] [--threads N] --out DIR "
          "[--json] [--quiet]",
          "train a model and save it as a checkpoint folder",
          std::move(flags),
          notes,
          runTrain};
}

}  // namespace attnlab::cli
