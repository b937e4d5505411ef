#include "train/memory_estimate.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <exception>

#include "data/task.h"
#include "model/model.h"
#include "train/trainer.h"

namespace attnlab {

namespace {

double physicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  return pages > 0 && pageSize > 0 ? double(pages) * double(pageSize) : INFINITY;
}

}  // namespace

std::string checkFitsInMemory(const ModelConfig& m) {
  const double d = std::max(m.d_model, 0);
  const double perLayer = 2 * d * d + (m.attention_only ? 0 : 2 * d * std::max(m.d_ff, 0));
  const double bytes = (std::max(m.vocab, 0) * d + std::max(m.n_layers, 0) * perLayer) * 4 * sizeof(float);
  const double available = physicalMemoryBytes();
  if (bytes <= available) return {};
  return "the model's weights alone would need at least " + std::to_string(std::llround(bytes / (1 << 30))) +
         " GiB, more than this machine's " + std::to_string(std::llround(available / (1 << 30))) + " GiB";
}

double trainingFlopsPerToken(const ModelConfig& model, double parameters, int sequenceLength) {
  return 6 * parameters + 6.0 * model.n_layers * sequenceLength * model.d_model;
}

double trainingFlopsPerStep(const ExperimentConfig& config, const MemoryEstimate& e) {
  const double tokens = double(config.train.batch) * e.sequenceLength;
  return trainingFlopsPerToken(config.model, double(e.parameters), e.sequenceLength) * tokens;
}

std::string estimateMemory(const ExperimentConfig& config, MemoryEstimate& out, ThisMachine machine) {
  if (std::string why = validate(config); !why.empty()) return why;
  std::string error;
  const std::unique_ptr<Task> task = makeTask(config.task, error);
  if (!task) return error;

  ModelConfig m = config.model;
  if (m.vocab == 0) m.vocab = task->vocabulary().size();
  if (machine == ThisMachine::mustFit)
    if (std::string why = checkFitsInMemory(m); !why.empty()) return why;
  MemoryEstimate e;
  e.sequenceLength = trainingSequenceLength(config, *task);
  try {
    const std::unique_ptr<const Model> shapes = Model::shapesOf(m);
    e.parameters = shapes->params().totalElements();
    e.activationBytes = shapes->activationBytes(config.train.batch, e.sequenceLength);
  } catch (const std::exception& ex) {
    return ex.what();
  }
  e.parameterBytes = e.parameters * sizeof(float) * 2;
  e.optimizerBytes = e.parameters * sizeof(float) * 2;
  out = e;
  return {};
}

}  // namespace attnlab
