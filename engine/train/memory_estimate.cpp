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

double roughParameters(const ModelConfig& m) {
  const double d = m.d_model;
  const double perLayer = 4 * d * d + (m.attention_only ? 0 : 2 * d * m.d_ff);
  return m.vocab * d * 2 + m.context * d + m.n_layers * perLayer;
}

double physicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  return pages > 0 && pageSize > 0 ? double(pages) * double(pageSize) : INFINITY;
}

struct Counted {
  size_t parameters = 0;
  size_t activationBytes = 0;
};

Counted count(const ModelConfig& m, const TrainConfig& t, int seqLen) {
  const Model model(m, t.seed);
  return {model.params().totalElements(), model.activationBytes(t.batch, seqLen)};
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

std::string estimateMemory(const ExperimentConfig& config, MemoryEstimate& out, double largestModelBuilt) {
  if (std::string why = validate(config); !why.empty()) return why;
  std::string error;
  const std::unique_ptr<Task> task = makeTask(config.task, error);
  if (!task) return error;

  ModelConfig m = config.model;
  if (m.vocab == 0) m.vocab = task->vocabulary().size();
  if (std::string why = checkFitsInMemory(m); !why.empty()) return why;
  MemoryEstimate e;
  e.sequenceLength = trainingSequenceLength(config, *task);
  try {
    Counted c;
    if (roughParameters(m) <= largestModelBuilt) {
      c = count(m, config.train, e.sequenceLength);
    } else {
      // Parameters and activations are an embedding part plus the same amount per layer.
      e.exact = false;
      m.attention = {m.attentionOf(0)};
      m.n_layers = 1;
      const Counted one = count(m, config.train, e.sequenceLength);
      m.n_layers = 2;
      const Counted two = count(m, config.train, e.sequenceLength);
      const size_t extraLayers = config.model.n_layers - 1;
      c.parameters = one.parameters + extraLayers * (two.parameters - one.parameters);
      c.activationBytes = one.activationBytes + extraLayers * (two.activationBytes - one.activationBytes);
    }
    e.parameters = c.parameters;
    e.activationBytes = c.activationBytes;
  } catch (const std::exception& ex) {
    return ex.what();
  }
  e.parameterBytes = e.parameters * sizeof(float) * 2;
  e.optimizerBytes = e.parameters * sizeof(float) * 2;
  out = e;
  return {};
}

}  // namespace attnlab
