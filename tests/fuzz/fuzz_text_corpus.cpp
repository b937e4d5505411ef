// A text corpus (the "text" task, data/text.cpp): read, its vocabulary made (characters, or a small
// byte-level BPE learned from it when the first byte is odd), encoded, and sampled.
#include <stdexcept>

#include "core/random.h"
#include "data/task.h"
#include "fuzz_support.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto file = fuzz::scratch() / "corpus.txt";
  fuzz::writeFile(file, fuzz::bytesOf(data + 1, size - 1));
  TaskConfig config;
  config.name = "text";
  config.text_path = file.string();
  if (data[0] & 1) config.settings["bpe_vocab"] = 260 + data[0] % 16;
  std::string error;
  std::unique_ptr<Task> task = makeTask(config, error);
  if (!task) return 0;
  Rng rng(1);
  const int length = task->sequenceLength(8);
  try {  // a sequence longer than a part is refused so (Task::sample's contract)
    task->sample(2, length, Split::Train, rng);
    task->sample(2, length, Split::Validation, rng);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
