#include "data/task.h"

namespace attnlab {

std::vector<int> Task::probe(int seqLen, Rng& rng) const { return sample(1, seqLen, Split::Validation, rng).inputs; }

std::unique_ptr<Task> makeTask(const TaskConfig& config, std::string& error) {
  const TaskRegistry& registry = TaskRegistry::instance();
  std::unique_ptr<Task> task = registry.create(config.name);
  if (!task) {
    error = "unknown task '" + config.name + "'; known tasks: " + registry.names();
    return nullptr;
  }
  error = task->configure(config);
  if (!error.empty()) return nullptr;
  if (config.seq_len != 0 && config.seq_len < task->minSequenceLength()) {
    error = "task " + config.name + ": seq_len = " + std::to_string(config.seq_len) + " is below its minimum of " +
            std::to_string(task->minSequenceLength()) + " tokens";
    return nullptr;
  }
  return task;
}

}  // namespace attnlab
