#include "export_plan.h"

#include <cmath>
#include <sstream>

#include "cli_error.h"
#include "format.h"
#include "io/config_json.h"
#include "train/memory_estimate.h"

namespace attnlab::cli {
namespace {

std::string gib(double bytes) {
  std::ostringstream s;
  s.precision(bytes < 1e9 ? 3 : 4);
  s << bytes / (1024.0 * 1024.0 * 1024.0) << " GiB";
  return s.str();
}

// 3 significant digits with an SI prefix: 5.72e8 -> "572 M", 3.75e16 -> "37.5 P".
std::string si(double value) {
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E", "Z"};
  int i = 0;
  while (std::fabs(value) >= 1000 && i < 7) value /= 1000, ++i;
  std::ostringstream s;
  s.precision(3);
  s << value << " " << prefixes[i];
  return s.str();
}

}  // namespace

std::string scalePlan(ExperimentConfig config, const ScaleRequest& request) {
  std::stringstream list(request.assignments);
  for (std::string item; std::getline(list, item, ',');) {
    if (item.empty()) continue;
    const bool qualified = item.find('.') < item.find('=');
    if (std::string why = applyOverride(config, qualified ? item : "model." + item); !why.empty()) throw CliError("--scale " + why);
  }
  if (std::string why = validate(config); !why.empty()) throw CliError("--scale: " + why);
  const int B = config.train.batch;
  if (request.devices < 1 || request.devices > B)
    throw CliError("--devices " + std::to_string(request.devices) + " must be between 1 and train.batch (" + std::to_string(B) + ")");
  ExperimentConfig perDevice = config;  // each device holds ceil(batch / devices) sequences
  perDevice.train.batch = (B + request.devices - 1) / request.devices;
  MemoryEstimate e;
  // a plan is for other machines: it may need more memory than this one has
  if (std::string why = estimateMemory(perDevice, e, ThisMachine::mayNotFit); !why.empty()) throw CliError("--scale: " + why);

  const ModelConfig& m = config.model;
  const double params = static_cast<double>(e.parameters);
  const double T = e.sequenceLength;
  const double flopsPerToken = trainingFlopsPerToken(m, params, e.sequenceLength);
  const double stateBytes = static_cast<double>(e.parameterBytes + e.optimizerBytes);
  const double perDeviceBytes = (request.fsdp ? stateBytes / request.devices : stateBytes) + e.activationBytes;
  const double tokens = static_cast<double>(config.train.steps) * B * T;

  std::ostringstream out;
  out << "plan for " << config.name << " scaled by " << request.assignments << "\n"
      << "  model        d_model " << m.d_model << ", " << m.n_layers << " layers x " << m.n_heads << " heads (" << m.kvHeads()
      << " KV), d_ff " << m.d_ff << ", context " << m.context << ", sequences of " << e.sequenceLength << "\n"
      << "  parameters   " << si(params)  << "\n"
      << "  per device   " << gib(perDeviceBytes) << " = " << (request.fsdp ? "weights, gradients and AdamW moments sharded, " : "")
      << gib(request.fsdp ? stateBytes / request.devices : stateBytes) << " float32 weights, gradients and AdamW moments + "
      << gib(static_cast<double>(e.activationBytes)) << " activations for " << perDevice.train.batch << " sequences ("
      << request.devices << " device(s), " << (request.fsdp ? "FSDP" : "DDP") << ", no activation checkpointing; bf16 autocast roughly halves activations)\n"
      << "  compute      " << si(flopsPerToken) << "FLOP per training token; " << si(tokens) << " tokens ("
      << config.train.steps << " steps x " << B << " x " << e.sequenceLength << ") = " << si(flopsPerToken * tokens) << "FLOP\n";
  if (request.tokensPerSecond > 0)
    out << "  time         " << duration(tokens / request.tokensPerSecond) << " at " << si(request.tokensPerSecond)
        << " tokens/s for the whole run\n";
  else
    out << "  time         give --tokens-per-second R (measured, e.g. from a short run's history.csv) for the duration\n";
  return out.str();
}

}  // namespace attnlab::cli
