// export pytorch: a self-contained folder that trains the experiment with PyTorch and torchrun
// (the attnlab_torch package, train.py, a README, and init/: the lab checkpoint it starts from).
#include <filesystem>
#include <iostream>

#include "cli_error.h"
#include "command.h"
#include "export_folder.h"
#include "export_plan.h"
#include "hf/hf_model.h"
#include "hf/pretrained_copy.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "core/files.h"
#include "io/fixed_angle_table.h"
#include "io/torch_members.h"
#include "setup.h"

namespace attnlab::cli {

const std::vector<std::pair<std::string_view, std::string_view>>& exportFiles();  // embed_export.cmake

namespace {

// What resources/attnlab_torch cannot build exactly, by its members.json (its config.py refuses the same): one line, or "".
std::string exportRefusal(const ExperimentConfig& config) {
  for (const auto& [path, text] : exportFiles())
    if (path == "attnlab_torch/members.json") return torchExportRefusal(config, std::string(text));
  return "this attnlab-cli was built without the PyTorch export's members.json";
}

// --model HFDIR: the imported model as the engine holds it (the lab's names and layouts: GPT-2's Conv1D
// transposed, q/k rows in the engine's rotary pair order), with the lab's default training settings
// and --set train.*, name, description. Opened before anything is written.
struct ImportedModel {
  ExperimentConfig config;
  std::unique_ptr<Model> model;
};

// The experiment of an imported model from its config.json alone (no weights are read).
ExperimentConfig importedExperiment(const Args& args, const hf::HfModelInfo& info) {
  ExperimentConfig config;
  std::filesystem::path dir = std::filesystem::absolute(args.text("model")).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();  // "folder/"
  config.name = dir.filename().string();
  config.description = "imported from a Hugging Face " + info.model_type + " folder";
  config.model = info.config;
  for (const std::string& assignment : args.all("set")) {
    if (assignment.rfind("train.", 0) != 0 && assignment.rfind("name=", 0) != 0 && assignment.rfind("description=", 0) != 0)
      throw CliError("--set " + assignment + ": with --model only train.*, name and description may change (the weights fix the rest)");
    if (std::string why = applyOverride(config, assignment); !why.empty()) throw CliError("--set " + why);
  }
  if (args.has("steps")) config.train.steps = static_cast<int>(args.integer("steps", config.train.steps, 1, 1 << 30));
  if (std::string why = exportRefusal(config); !why.empty()) throw CliError(why);
  return config;
}

ImportedModel openImported(const Args& args) {
  std::unique_ptr<Model> model;
  hf::HfModelInfo info;
  if (std::string why = hf::openHfModel(args.required("model"), model, info); !why.empty()) throw CliError(why);
  return {importedExperiment(args, info), std::move(model)};
}

// init/ of an imported model: its config.json and weights (no history: it has not trained in the lab),
// and pretrained/, what describes its Hugging Face folder, as the lab's own fine-tuning checkpoints keep
// it (hf/pretrained_copy.h). Its task is token_files: train.py names the data folder it trains on, so
// each checkpoint opens in the lab and evaluates on that data at the data's sequence length.
void writeImportedInit(const ImportedModel& imported, const std::string& hfDir, const std::string& init) {
  std::error_code ec;
  std::filesystem::create_directories(init, ec);
  if (ec) throw CliError(init + ": cannot create the folder (" + ec.message() + ")");
  if (std::string why = hf::keepPretrainedDescription(hfDir, init + "/" + hf::kPretrainedFolder); !why.empty()) throw CliError(why);
  ExperimentConfig config = imported.config;
  config.task = TaskConfig{};
  config.task.name = "token_files";
  config.task.tokenizer = hf::kPretrainedFolder;
  if (std::string why = writeFileAtomic(init + "/config.json", configToJson(config)); !why.empty()) throw CliError(why);
  if (std::string why = writeSafetensors(init + "/model.safetensors", imported.model->params()); !why.empty()) throw CliError(why);
}

// --model DIR (a trained run: its weights, with --set limited to what keeps them valid) or a new experiment.
std::unique_ptr<Trainer> experimentToExport(const Args& args) {
  if (args.has("model") + args.has("preset") + args.has("config") != 1)
    throw CliError("give exactly one of --model DIR, --preset NAME or --config FILE");
  if (!args.has("model")) return std::make_unique<Trainer>(experimentFromFlags(args));
  LoadedCheckpoint loaded = openModel(args);
  ExperimentConfig config = loaded.config;
  for (const std::string& assignment : args.all("set")) {
    if (assignment.rfind("train.", 0) != 0 && assignment.rfind("name=", 0) != 0 && assignment.rfind("description=", 0) != 0)
      throw CliError("--set " + assignment + ": with --model only train.*, name and description may change (the weights fix the rest)");
    if (std::string why = applyOverride(config, assignment); !why.empty()) throw CliError("--set " + why);
  }
  if (args.has("steps")) config.train.steps = static_cast<int>(args.integer("steps", config.train.steps, 1, 1 << 30));
  if (std::string why = validate(config); !why.empty()) throw CliError("invalid configuration: " + why);
  if (config.train.seed != loaded.config.train.seed && hasFixedAngleTable(loaded.trainer->model()))
    throw CliError("--set train.seed: this model's per-token angle table (accumulated_rotation, omega_mode 1) is drawn from its seed, which must stay");
  return std::make_unique<Trainer>(config, copyModel(loaded.trainer->model()), loaded.trainer->history());
}

int runExport(const Args& args) {
  if (args.has("scale")) {  // plan only: nothing is written
    ScaleRequest request{args.text("scale"), static_cast<int>(args.integer("devices", 1, 1, 1 << 20)),
                         args.number("tokens-per-second", 0, 0, 1e18), args.has("fsdp")};
    if (args.has("model") && hf::isHfFolder(args.text("model"))) {  // an imported model: its config.json is enough
      hf::HfModelInfo info;
      if (std::string why = hf::readHfConfig(args.text("model"), info); !why.empty()) throw CliError(why);
      std::cout << scalePlan(importedExperiment(args, info), request);
    } else {
      std::cout << scalePlan(experimentToExport(args)->config(), request);
    }
    return 0;
  }
  const std::string out = args.required("out");
  const bool imported = args.has("model") && hf::isHfFolder(args.text("model"));
  const ImportedModel hfModel = imported ? openImported(args) : ImportedModel{};
  const std::unique_ptr<Trainer> trainer = imported ? nullptr : experimentToExport(args);
  if (trainer)
    if (std::string why = exportRefusal(trainer->config()); !why.empty()) throw CliError(why);
  prepareOutputFolder(out, "train.py", "an exported experiment");
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(out) / "attnlab_torch", ec);
  if (ec) throw CliError(out + ": cannot create attnlab_torch/ (" + ec.message() + ")");
  for (const auto& [path, text] : exportFiles())
    if (std::string why = writeFileAtomic((fs::path(out) / path).string(), std::string(text)); !why.empty()) throw CliError(why);
  fs::permissions(fs::path(out) / "train.py", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add, ec);
  const std::string init = (fs::path(out) / "init").string();
  if (imported) {
    writeImportedInit(hfModel, args.text("model"), init);
    const ExperimentConfig& c = hfModel.config;
    const uint64_t parameters = hfModel.model->params().totalElements();
    std::cout << "wrote " << out << ": attnlab_torch/, train.py, README.md and init/ (" << c.name << ", " << c.description << ", "
              << parameters << " parameters)\nnext: attnlab-cli data --text CORPUS --tokenizer " << init << "/" << hf::kPretrainedFolder
              << " --tokens N --out DATA (or your own token files, " << out << "/README.md), then torchrun --standalone --nproc_per_node 2 " << out << "/train.py --data DATA --out RUN"
              << std::endl;
    return 0;
  }
  if (std::string why = saveCheckpoint(init, *trainer); !why.empty()) throw CliError(why, 1);
  // the per-token table the lab rebuilds from the seed (accumulated_rotation, omega_mode 1), which is no parameter
  if (std::string why = writeFixedAngleTable(init, trainer->model()); !why.empty()) throw CliError(why, 1);
  const ExperimentConfig& c = trainer->config();
  std::cout << "wrote " << out << ": attnlab_torch/, train.py, README.md and init/ (" << c.name << ", "
            << trainer->model().params().totalElements() << " parameters, "
            << (trainer->stepsDone() ? "trained " + std::to_string(trainer->stepsDone()) + " steps" : "initial weights")
            << ")\nnext: attnlab-cli data " << (args.has("model") ? "--model " + args.text("model") : args.has("preset") ? "--preset " + args.text("preset") : "--config " + args.text("config"))
            << " --tokens N --out DATA; then torchrun --standalone --nproc_per_node 2 " << out
            << "/train.py --data DATA --out RUN (see " << out << "/README.md)" << std::endl;
  return 0;
}

}  // namespace

Command exportCommand() {
  std::vector<FlagSpec> flags = experimentFlags();
  flags.insert(flags.begin(), modelFlag());
  flags.insert(flags.begin(), {"subcommand", "NAME", "the target, given as the first argument: pytorch"});
  flags.push_back({"out", "DIR", "folder to write (created; an earlier export there is overwritten)"});
  flags.push_back({"scale", "KEY=V,...", "print a plan for the experiment scaled (e.g. d_model=768,n_layers=12,n_heads=12) instead of writing"});
  flags.push_back({"devices", "N", "with --scale: processes sharing each step's batch (default 1)"});
  flags.push_back({"tokens-per-second", "R", "with --scale: the run's throughput, for its duration"});
  flags.push_back({"fsdp", "", "with --scale: shard weights, gradients and optimiser state over the devices"});
  return {"export",
          "pytorch (--model DIR|HFDIR | --preset NAME | --config FILE) (--out DIR | --scale KEY=V,... [--devices N] [--tokens-per-second R] [--fsdp]) [--set KEY=VALUE ...]",
          "write a folder that trains the experiment with PyTorch and torchrun (DDP/FSDP, CPU or CUDA)",
          flags,
          "The folder holds attnlab_torch/ (the lab's architecture in PyTorch, exactly: same parameter names,\n"
          "layouts and numerics), train.py, README.md and init/ (a lab checkpoint: the experiment's config.json\n"
          "and its weights: trained ones with --model, else the lab's own initial weights for the seed).\n"
          "--model may name a Hugging Face folder (gpt2, llama, qwen2, gpt_neox): init/ then holds it in the lab's layout.\n"
          "Training data comes from 'attnlab-cli data'. Refused, in one line: experiments the package cannot\n"
          "express.",
          runExport,
          {"pytorch"}};
}

}  // namespace attnlab::cli
