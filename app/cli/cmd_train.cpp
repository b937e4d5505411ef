// train: builds an experiment, trains it, and saves the checkpoint folder.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>

#include "analysis/layer_diagnostics_probe.h"
#include "cli_error.h"
#include "command.h"
#include "hf/hf_finetune.h"
#include "io/config_json.h"
#include "interrupt.h"
#include "io/checkpoint.h"
#include "setup.h"
#include "train_report.h"

namespace attnlab::cli {
namespace {

constexpr int kAutosaveEvery = 500;
constexpr int kFineTuneSteps = 100;

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
  if (access(parent.c_str(), W_OK) != 0) throw CliError(parent.string() + ": not writable (" + std::strerror(errno) + ")");
}

void save(const std::string& dir, const Trainer& trainer) {
  if (std::string why = saveCheckpoint(dir, trainer); !why.empty())
    throw CliError("cannot save the checkpoint: " + why, 1);
}

// Trains until the configured steps, Ctrl-C or --stop-at, autosaving on the way, then saves once
// more. Returns the exit code.
int trainAndSave(Trainer& trainer, const std::string& out, int stopAt, const Args& args) {
  TrainReport report(trainer.config().train.steps, args.has("json"), args.has("quiet"), trainer.stepsDone());
  const InterruptGuard interrupt;
  int lastAutosave = 0;
  auto stopped = [&] { return interrupt.requested() || (stopAt > 0 && trainer.stepsDone() >= stopAt); };
  const int firstStep = trainer.stepsDone();
  while (!trainer.finished() && !stopped()) {
    try {
      report.onStep(trainer.trainStep(), trainer.config().train.qk_guard);
    } catch (const DivergenceError& e) {
      report.onDiverged(e.what(), trainer.stepsDone());
      const std::string kept =
          lastAutosave > 0 ? " (" + out + " keeps the autosave of step " + std::to_string(lastAutosave) + ")" : "";
      throw CliError(std::string(e.what()) + "; nothing saved" + kept, kExitDiverged);
    }
    if (trainer.stepsDone() % kAutosaveEvery == 0 && !trainer.finished() && !stopped()) {
      // A failed autosave (a full disk) loses nothing yet: training goes on, the final save retries.
      if (std::string why = saveCheckpoint(out, trainer); why.empty()) lastAutosave = trainer.stepsDone();
      else std::cerr << "attnlab-cli: the autosave at step " << trainer.stepsDone() << " failed, training goes on: " << why << std::endl;
    }
  }
  if (trainer.stepsDone() == firstStep)  // nothing new must not replace a checkpoint already at --out
    throw CliError("stopped by Ctrl-C before the first step; nothing saved", kExitInterrupted);
  save(out, trainer);
  report.onFinished(trainer.evaluate(), out, interrupt.requested());
  if (!trainer.finished() && !interrupt.requested() && !args.has("json"))
    std::cout << "stopped at step " << trainer.stepsDone() << " (--stop-at); continue with: attnlab-cli train --resume "
              << out << std::endl;
  return interrupt.requested() ? kExitInterrupted : 0;
}

int stopAtFrom(const Args& args) {
  return static_cast<int>(args.integer("stop-at", 0, 1, std::numeric_limits<int>::max()));
}

// --resume DIR: the run in DIR goes on with its own configuration and is saved back into DIR.
int runResume(const Args& args) {
  for (const FlagSpec& flag : experimentFlags())
    if (args.has(flag.name))
      throw CliError("--resume continues the run with its saved configuration; --" + flag.name + " cannot be changed");
  if (args.has("out")) throw CliError("--resume saves back into its own folder; --out cannot be given with it");
  const std::string dir = args.text("resume");
  LoadedCheckpoint loaded;
  if (std::string why = loadCheckpoint(dir, loaded); !why.empty()) throw CliError(why);
  if (!loaded.notice.empty()) std::cerr << dir << ": " << loaded.notice << std::endl;
  Trainer& trainer = *loaded.trainer;
  trainer.setDiagnosticsProbe(layerDiagnosticsProbe(trainer));
  if (trainer.finished())
    throw CliError(dir + ": the run has already done its " + std::to_string(trainer.config().train.steps) +
                   " steps (train.steps); nothing to resume");
  const int stopAt = stopAtFrom(args);
  if (stopAt > 0 && stopAt <= trainer.stepsDone())
    throw CliError("--stop-at " + std::to_string(stopAt) + " is not after step " + std::to_string(trainer.stepsDone()) +
                   ", where " + dir + " stopped");
  return trainAndSave(trainer, dir, stopAt, args);
}

// --model HFDIR --text FILE: fine-tunes an opened Hugging Face model on the file, read through the
// model's own tokenizer (hf/hf_finetune.h); --steps 0 saves the model as a checkpoint untrained.
int runFineTune(const Args& args) {
  if (args.has("preset") || args.has("config") || args.has("resume"))
    throw CliError("--model fine-tunes the model in that folder; --preset, --config and --resume do not go with it");
  const std::string dir = args.text("model");
  if (!hf::isHfFolder(dir))
    throw CliError(dir + " is not a Hugging Face model folder (no config.json with a model_type); continue a lab run with --resume DIR");
  const std::string out = args.required("out");
  checkOutputFolder(out);
  std::unique_ptr<Model> model;
  hf::HfModelInfo info;
  if (std::string why = hf::openHfModel(dir, model, info); !why.empty()) throw CliError(why);
  const int steps = static_cast<int>(args.integer("steps", kFineTuneSteps, 0, std::numeric_limits<int>::max()));
  ExperimentConfig config = hf::fineTuneExperiment(info, args.required("text"), steps);
  for (const std::string& assignment : args.all("set"))
    if (std::string why = applyOverride(config, assignment); !why.empty()) throw CliError("--set " + why);
  config.train.seed = static_cast<uint64_t>(
      args.integer("seed", static_cast<long long>(config.train.seed), 0, std::numeric_limits<long long>::max()));
  config.train.threads = threadsFrom(args, config.train.threads);
  if (std::string why = validate(config); !why.empty()) throw CliError("invalid configuration: " + why);
  std::unique_ptr<Trainer> trainer;
  if (std::string why = hf::makeFineTuner(model, config, trainer); !why.empty()) throw CliError(dir + ": " + why);
  if (steps > 0) return trainAndSave(*trainer, out, stopAtFrom(args), args);
  save(out, *trainer);
  std::cout << "saved " << out << ": " << info.model_type << " from " << dir << ", " << info.parameters
            << " parameters, not trained (--steps 0)" << std::endl;
  return 0;
}

int runTrain(const Args& args) {
  if (args.has("model")) return runFineTune(args);
  if (args.has("resume")) return runResume(args);
  const ExperimentConfig config = experimentFromFlags(args);
  const std::string out = args.required("out");
  checkOutputFolder(out);
  Trainer trainer(config);
  trainer.setDiagnosticsProbe(layerDiagnosticsProbe(trainer));  // history.csv's per-layer diagnostics, as the app records them
  return trainAndSave(trainer, out, stopAtFrom(args), args);
}

}  // namespace

Command trainCommand() {
  std::vector<FlagSpec> flags = experimentFlags();
  flags.push_back({"out", "DIR", "checkpoint folder to write (config.json, model.safetensors, history.csv)"});
  flags.push_back({"stop-at", "N", "save and stop after step N, as Ctrl-C does (exit code 0); --resume continues"});
  flags.push_back({"resume", "DIR", "continue the run saved in DIR to its train.steps, exactly as if never stopped"});
  flags.push_back({"json", "", "stdout: one JSON object per evaluation, then a final {\"event\":\"final\", ...} line"});
  flags.push_back({"quiet", "", "no progress bar and no per-evaluation output; only the final result"});
  flags.push_back({"model", "HFDIR", "fine-tune the Hugging Face model in HFDIR (with --text FILE, --out DIR)"});
  flags.push_back({"text", "FILE", "with --model: the UTF-8 file to fine-tune on, read with the model's own tokenizer"});
  const std::string autosave =
      "The checkpoint is saved at the end and every " + std::to_string(kAutosaveEvery) + " steps.\n";
  const std::string notes =
      "The config is the preset or file, then each --set in order, then --steps, --seed and --threads.\n"
      "A progress bar (step, loss, val loss, accuracy, tokens/s, ETA) is drawn on stderr when it is a terminal.\n" +
      autosave +
      "If training diverges (NaN/Inf) nothing new is saved, so the last autosave stays; exit code 3.\n"
      "Ctrl-C stops after the current step, saves, prints the final metrics and exits with 130.\n"
      "A checkpoint holds the optimiser's moments and the data stream's position, so --resume DIR continues\n"
      "bit for bit as the uninterrupted run would (same threads); older checkpoints restart the optimiser.\n"
      "--model HFDIR --text FILE fine-tunes a Hugging Face model (default " + std::to_string(kFineTuneSteps) +
      " steps, batch 4 x 128 tokens, lr 1e-4; --set task.seq_len=N,\n"
      "train.batch=N, train.lr=X change them); --steps 0 saves it as a checkpoint untrained. The checkpoint names HFDIR\n"
      "(task.tokenizer): its tokenizer reads the text, and 'export-hf --model CHECKPOINT' writes it back in HFDIR's layout.";
  return {"train",
          "(--preset NAME | --config FILE) [--set KEY=VALUE]... [--steps N] [--seed S] [--threads N] --out DIR "
          "[--stop-at N] [--json] [--quiet]  |  --resume DIR [--stop-at N] [--json] [--quiet]  |  --model HFDIR --text FILE "
          "[--steps N] [--set KEY=VALUE]... --out DIR",
          "train a model and save it as a checkpoint folder",
          std::move(flags),
          notes,
          runTrain};
}

}  // namespace attnlab::cli
