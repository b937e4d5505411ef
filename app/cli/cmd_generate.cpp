// generate: autoregressive sampling from a saved model, one full forward pass per new token.
#include <algorithm>
#include <iostream>
#include <limits>

#include "command.h"
#include "format.h"
#include "model/workspace.h"
#include "predictions.h"
#include "setup.h"

namespace attnlab::cli {
namespace {

// The next token after `sequence`, seeing at most the model's context: once the sequence is
// longer, the window slides and the oldest tokens drop out of view.
int nextToken(const Model& model, Workspace& ws, const std::vector<int>& sequence, double temperature, Rng& rng) {
  const int T = std::min<int>(sequence.size(), model.config().context);
  const std::vector<int> window(sequence.end() - T, sequence.end());
  const std::vector<int> noTargets(T, -1);
  model.forward(ws, window.data(), noTargets.data(), 1, T);
  const Mat& logits = workspaceLogits(ws);
  const float* last = logits.row(T - 1).data();
  const int vocab = static_cast<int>(logits.cols());
  if (temperature == 0) return static_cast<int>(std::max_element(last, last + vocab) - last);
  return sampleIndex(softmax(last, vocab, temperature), rng);
}

int runGenerate(const Args& args) {
  const int count = static_cast<int>(args.integer("tokens", 32, 1, 100000));
  const double temperature = args.number("temperature", 1.0, 0.0, 100.0);
  const long long seed = args.integer("seed", 1, 0, std::numeric_limits<long long>::max());
  LoadedCheckpoint loaded = openModel(args);
  const Trainer& trainer = *loaded.trainer;
  const Vocabulary& vocabulary = trainer.task().vocabulary();
  const std::vector<int> prompt = encodeFlag(args, "prompt", trainer);

  Rng rng(static_cast<uint64_t>(seed));
  auto ws = makeWorkspace();
  std::vector<int> sequence = prompt;
  for (int i = 0; i < count; ++i) sequence.push_back(nextToken(trainer.model(), *ws, sequence, temperature, rng));
  const std::vector<int> generated(sequence.begin() + prompt.size(), sequence.end());

  if (args.has("json")) {
    Json labels = Json::array();
    for (int id : generated) labels.push_back(vocabulary.token(id));
    std::cout << Json{{"prompt_tokens", prompt},    {"tokens", generated},
                      {"labels", labels},           {"text", vocabulary.decode(generated)},
                      {"temperature", temperature}, {"seed", seed}}
                     .dump()
              << std::endl;
  } else {
    std::cout << vocabulary.decode(sequence) << std::endl;
  }
  return 0;
}

}  // namespace

Command generateCommand() {
  return {"generate",
          "--model DIR --prompt \"...\" [--tokens N] [--temperature T] [--seed S] [--json]",
          "continue a prompt by sampling from a saved model",
          {modelFlag(),
           {"prompt", "TEXT", "start of the sequence, in the task's vocabulary"},
           {"tokens", "N", "tokens to generate (default 32)"},
           {"temperature", "T", "sampling temperature; 0 always picks the most likely token (default 1)"},
           {"seed", "S", "random seed for sampling (default 1)"},
           {"json", "", "print {prompt_tokens, tokens, labels, text, temperature, seed} as one JSON object"}},
          "Each new token runs the full forward pass over the sequence (no KV cache yet: that comes with\n"
          "the cache and eviction work). Past the model's context the window slides: only the most recent\n"
          "context tokens are seen.",
          runGenerate};
}

}  // namespace attnlab::cli
