#pragma once
// Flags and helpers shared by the commands: building an experiment from
// --preset/--config/--set/--steps/--seed/--threads, and opening a saved model with --model.
#include <vector>

#include "args.h"
#include "io/checkpoint.h"
#include "experiment/experiment_config.h"

namespace attnlab::cli {

FlagSpec threadsFlag();
std::vector<FlagSpec> experimentFlags();  // --preset --config --set --steps --seed --threads

// The named preset or config file, then each --set in order, then --steps, --seed and --threads.
// Throws CliError when a source is missing or unreadable, an override is bad, or validate() objects.
ExperimentConfig experimentFromFlags(const Args& args);
// --threads N, or `fallback` when absent.
int threadsFrom(const Args& args, int fallback);

FlagSpec modelFlag();  // --model DIR
// Loads the checkpoint named by --model; throws CliError with the loader's reason.
LoadedCheckpoint openModel(const Args& args);

// The model's vocabulary encoding of the value of --<flag>; throws CliError on an unknown
// token (naming it and its position) or when the text holds no token at all.
std::vector<int> encodeFlag(const Args& args, const std::string& flag, const Trainer& trainer);

}  // namespace attnlab::cli
