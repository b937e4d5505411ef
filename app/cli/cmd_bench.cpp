// bench: training throughput and probe-trace latency of the "default" preset on this machine.
#include <cstdio>
#include <iostream>

#include "cli_error.h"
#include "command.h"
#include "format.h"
#include "io/config_json.h"
#include "setup.h"
#include "train/benchmark.h"

namespace attnlab::cli {
namespace {

constexpr const char* kPreset = "default";
constexpr int kWarmupSteps = 2;  // the first steps allocate workspaces and warm caches
constexpr int kTraces = 20;

Json spreadJson(const Spread& s) { return {{"median", s.median}, {"min", s.min}, {"max", s.max}}; }

std::string row(const std::string& what, const std::string& median, const std::string& min, const std::string& max,
                const std::string& note) {
  char text[160];
  std::snprintf(text, sizeof(text), "  %-20s %10s %10s %10s", what.c_str(), median.c_str(), min.c_str(), max.c_str());
  return text + (note.empty() ? "" : "   " + note) + "\n";
}

int runBench(const Args& args) {
  const int steps = static_cast<int>(args.integer("steps", 10, 1, 100000));
  ExperimentConfig config;
  if (std::string why = loadPreset(kPreset, config); !why.empty()) throw CliError(why);
  config.train.threads = threadsFrom(args, config.train.threads);
  prepareForTiming(config, kWarmupSteps, steps);
  Trainer trainer(config);
  const Spread train = spreadOf(timeTrainingSteps(trainer, kWarmupSteps, steps).tokens_per_second);
  const Spread trace = spreadOf(timeProbeTraces(trainer, kTraces).ms);
  const size_t peakBytes = peakResidentBytes();
  const int seqLen = static_cast<int>(trainer.probeTokens().size());
  const size_t parameters = trainer.model().params().totalElements();
  const size_t activationBytes = trainer.model().activationBytes(config.train.batch, seqLen, ActivationPass::training);
  if (args.has("json")) {
    std::cout << Json{{"preset", kPreset},
                      {"threads", config.train.threads},
                      {"batch", config.train.batch},
                      {"seq_len", seqLen},
                      {"warmup_steps", kWarmupSteps},
                      {"steps", steps},
                      {"tokens_per_second", spreadJson(train)},
                      {"trace_ms", spreadJson(trace)},
                      {"traces", kTraces},
                      {"parameters", parameters},
                      {"activation_bytes", activationBytes},
                      {"peak_rss_bytes", peakBytes}}
                     .dump()
              << std::endl;
    return 0;
  }
  const ModelConfig& m = config.model;
  std::cout << "preset " << kPreset << " (" << config.task.name << "): " << m.n_layers << " layers x " << m.n_heads
            << " heads, d_model " << m.d_model << ", batch " << config.train.batch << " x " << seqLen << " tokens, "
            << config.train.threads << (config.train.threads == 1 ? " thread\n\n" : " threads\n\n")
            << row("", "median", "min", "max", "")
            << row("train tokens/s", fixed(train.median, 0), fixed(train.min, 0), fixed(train.max, 0),
                   std::to_string(steps) + " steps after " + std::to_string(kWarmupSteps) + " warm-up")
            << row("probe trace ms", fixed(trace.median, 2), fixed(trace.min, 2), fixed(trace.max, 2),
                   std::to_string(kTraces) + " traces of " + std::to_string(seqLen) + " tokens")
            << row("parameters", compactCount(parameters), "", "", std::to_string(parameters))
            << row("activation memory", fixed(activationBytes / 1048576.0, 1) + " MiB", "", "",
                   "forward + backward at batch " + std::to_string(config.train.batch) + " x " + std::to_string(seqLen))
            << row("peak memory", fixed(peakBytes / 1048576.0, 1) + " MiB", "", "", "resident, whole process")
            << std::flush;
  return 0;
}

}  // namespace

Command benchCommand() {
  return {"bench",
          "[--threads N] [--steps N] [--json]",
          "time training steps and probe traces of the \"default\" preset on this machine",
          {threadsFlag(),
           {"steps", "N", "timed training steps after 2 warm-up steps (default 10)"},
           {"json", "", "print the results as one JSON object"}},
          "Reports the median, min and max tokens/s of the timed steps, the median latency of 20 traces\n"
          "of the probe at the preset's full context, the parameter count, the activation memory\n"
          "estimate of one forward + backward and the process's peak resident memory.",
          runBench};
}

}  // namespace attnlab::cli
