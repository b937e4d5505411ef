#pragma once
// Shared machinery of the task implementations (not part of the public task API).
#include <cassert>
#include <string>
#include <vector>

#include "data/task.h"

namespace attnlab {

// Rejects keys the task does not declare (typos), then checks ranges. "" when all is well.
std::string checkTaskSettings(const Settings& settings, const std::vector<SettingSpec>& specs, const std::string& task);
// Throws std::invalid_argument with a one-line reason for a batch the task cannot build.
void checkBatchShape(const std::string& task, int batch, int seqLen, int minSeqLen);
// inputs zero, targets -1 ("nothing asked").
Batch emptyBatch(int batch, int seqLen);

// Readable symbol names: "a".."z" then "A".."Z" (at most 52), or "0", "1", ...
std::vector<std::string> letterSymbols(int count);
std::vector<std::string> numberSymbols(int count);

// Writes the T+1 tokens s[0..T] of one row of a batch: inputs[t] = s[t], and targets[t] = s[t+1]
// when s[t+1] is an answer (left -1 otherwise).
class SequenceWriter {
 public:
  SequenceWriter(Batch& batch, int row)
      : inputs_(batch.inputs.data() + static_cast<size_t>(row) * batch.T),
        targets_(batch.targets.data() + static_cast<size_t>(row) * batch.T),
        length_(batch.T) {}

  int remaining() const { return length_ + 1 - written_; }
  void put(int token, bool answer = false) {
    assert(remaining() > 0);
    if (written_ < length_) inputs_[written_] = token;
    if (answer && written_ > 0) targets_[written_ - 1] = token;
    ++written_;
  }
  void repeat(int token, int count) {
    for (int i = 0; i < count; ++i) put(token);
  }

 private:
  int* inputs_;
  int* targets_;
  int length_;
  int written_ = 0;
};

// A task whose sequences are drawn from a generator: configure() checks the settings before
// setUp(), and sample() builds each row with write(). Training rows come from the caller's
// generator; validation rows from a generator seeded by it and a constant, so the two differ.
class GeneratedTask : public Task {
 public:
  explicit GeneratedTask(std::string name) : name_(std::move(name)) {}

  std::string configure(const TaskConfig& config) final;
  const Vocabulary& vocabulary() const final { return vocabulary_; }
  Batch sample(int batch, int seqLen, Split split, Rng& rng) const final;

 protected:
  // Reads the (already validated) settings and builds the vocabulary; "" or a one-line reason.
  virtual std::string setUp(const Settings& settings) = 0;
  // Writes exactly out.remaining() tokens: one sequence.
  virtual void write(SequenceWriter& out, Split split, Rng& rng) const = 0;

  const std::string& name() const { return name_; }
  int token(const std::string& text) const {
    const int id = vocabulary_.id(text);
    assert(id >= 0);
    return id;
  }

  Vocabulary vocabulary_;

 private:
  std::string name_;
};

}  // namespace attnlab
