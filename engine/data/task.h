#pragma once
// A task generates training and validation sequences and says how to score them.
// Members register in TaskRegistry, one file each (see core/registry.h).
#include <memory>
#include <string>
#include <vector>

#include "core/random.h"
#include "core/registry.h"
#include "core/settings.h"
#include "tokenizer/vocabulary.h"
#include "config/task_config.h"

namespace attnlab {

enum class Split { Train, Validation };

// B sequences of T tokens, row-major [B, T]. targets[b*T + t] is the token expected after
// inputs[b*T + t], or -1 where the task asks nothing (no loss, no accuracy there).
struct Batch {
  int B = 0;
  int T = 0;
  std::vector<int> inputs;
  std::vector<int> targets;
};

class Task {
 public:
  virtual ~Task() = default;

  virtual std::vector<SettingSpec> settingSpecs() const { return {}; }
  // Called once before use. Returns "" on success or a one-line reason (bad setting, unreadable file).
  virtual std::string configure(const TaskConfig& config) = 0;

  virtual const Vocabulary& vocabulary() const = 0;
  // The natural sequence length for a context of `context` tokens (<= context).
  virtual int sequenceLength(int context) const { return context; }
  // The shortest sequence the task can build; sample() throws std::invalid_argument below it.
  virtual int minSequenceLength() const { return 1; }
  // Deterministic given the generator state. Validation draws come from held-out data where the
  // task has a finite corpus (text files), else from the same distribution with another stream.
  // Throws std::invalid_argument (one-line reason) when seqLen is below minSequenceLength() or
  // longer than a finite corpus can provide.
  virtual Batch sample(int batch, int seqLen, Split split, Rng& rng) const = 0;
  // True when targets mark answer positions whose exact match is the task's accuracy
  // (copy, recall, ...); false for language modelling, where only loss/perplexity apply.
  virtual bool hasAnswers() const = 0;
  // A short example input for traces and the probe editor.
  virtual std::vector<int> probe(int seqLen, Rng& rng) const;
};

using TaskRegistry = Registry<Task>;

// Creates and configures the task named in `config`; on failure returns null and sets `error`.
std::unique_ptr<Task> makeTask(const TaskConfig& config, std::string& error);

}  // namespace attnlab
