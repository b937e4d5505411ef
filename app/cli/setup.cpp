#include "setup.h"

#include <cstdint>
#include <limits>

#include "cli_error.h"
#include "hf/hf_model.h"
#include "io/config_json.h"
#include "core/files.h"

namespace attnlab::cli {

FlagSpec threadsFlag() { return {"threads", "N", "worker threads (default: the experiment's train.threads)"}; }

std::vector<FlagSpec> experimentFlags() {
  return {{"preset", "NAME", "start from a built-in preset (see 'attnlab-cli list')"},
          {"config", "FILE", "start from an experiment JSON file (as saved in a checkpoint's config.json)"},
          {"set", "KEY=VALUE", "override one setting, e.g. model.d_model=64 or train.lr=1e-3 (repeatable)", true},
          {"steps", "N", "training steps (train.steps)"},
          {"seed", "S", "random seed for weights and data (train.seed)"},
          threadsFlag()};
}

int threadsFrom(const Args& args, int fallback) { return static_cast<int>(args.integer("threads", fallback, 1, 64)); }

ExperimentConfig experimentFromFlags(const Args& args) {
  if (args.has("preset") == args.has("config")) throw CliError("give exactly one of --preset NAME or --config FILE");
  ExperimentConfig config;
  if (args.has("preset")) {
    if (std::string why = loadPreset(args.text("preset"), config); !why.empty()) throw CliError(why);
  } else {
    const std::string path = args.text("config");
    std::string text;
    if (std::string why = readWholeFile(path, text); !why.empty()) throw CliError(why);
    if (std::string why = configFromJson(text, config); !why.empty()) throw CliError(path + ": " + why);
  }
  for (const std::string& assignment : args.all("set"))
    if (std::string why = applyOverride(config, assignment); !why.empty()) throw CliError("--set " + why);
  config.train.steps = static_cast<int>(args.integer("steps", config.train.steps, 1, std::numeric_limits<int>::max()));
  config.train.seed = static_cast<uint64_t>(
      args.integer("seed", static_cast<long long>(config.train.seed), 0, std::numeric_limits<long long>::max()));
  config.train.threads = threadsFrom(args, config.train.threads);
  if (std::string why = validate(config); !why.empty()) throw CliError("invalid configuration: " + why);
  return config;
}

FlagSpec modelFlag() { return {"model", "DIR", "a checkpoint folder written by 'attnlab-cli train' or the app"}; }

LoadedCheckpoint openModel(const Args& args) {
  LoadedCheckpoint loaded;
  if (hf::isHfFolder(args.required("model")))
    throw CliError(args.required("model") + " is a Hugging Face model folder; this command needs a lab checkpoint "
                   "(trace, eval and generate open Hugging Face folders)");
  if (std::string why = loadCheckpoint(args.required("model"), loaded); !why.empty()) throw CliError(why);
  return loaded;
}

std::vector<int> encodeFlag(const Args& args, const std::string& flag, const Trainer& trainer) {
  std::vector<int> ids;
  std::string why;
  if (!trainer.task().vocabulary().encode(args.required(flag), ids, why)) throw CliError("--" + flag + ": " + why);
  if (ids.empty()) throw CliError("--" + flag + " holds no token");
  return ids;
}

}  // namespace attnlab::cli
