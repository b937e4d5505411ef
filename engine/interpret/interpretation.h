#pragma once
// A causal interpretation of one model on given prompts (activation patching, logit lens, ...):
// the typed function lives in its own file beside a registered Interpretation that reads an
// InterpretRequest and reports JSON rows ({layer, position, head, value} in spirit), so that
// `attnlab-cli interpret KIND` and the app run any of them the same way:
//   ATTNLAB_REGISTER(InterpretationRegistry, "lens", "one line", [] { return std::make_unique<...>(); });
// Everything here takes token ids, so it serves any model and any tokenizer.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/registry.h"
#include "data/task.h"
#include "model/model.h"

namespace attnlab {

using Json = nlohmann::ordered_json;

struct InterpretRequest {
  std::vector<int> tokens;          // lens, dla, attribution
  std::vector<int> clean, corrupt;  // patch
  int answer = -1, wrong = -1;      // patch (-1: the runs' own top predictions)
  int token = -1;                   // lens, dla, attribution (-1: the model's prediction)
  std::string site = "resid";       // patch
  bool perPosition = false;         // patch at head sites
  int top_k = 5;                    // lens: tokens per cell; retrieval: heads masked
  uint64_t seed = 1;                // retrieval: the random heads masked for comparison
  std::vector<Batch> sequences;     // retrieval: sequences of the model's task (targets mark answers)
  std::vector<std::string> labels;  // the vocabulary's token texts, for readable output (may be empty)
  std::function<bool(int, int)> progress;  // (done, total); returning false stops a long sweep
};

class Interpretation {
 public:
  virtual ~Interpretation() = default;
  // Throws std::invalid_argument with a one-line reason on a bad request.
  virtual Json run(const Model& model, const InterpretRequest& request) const = 0;
  // A few lines for people, from run()'s result.
  virtual std::string describe(const Json& result) const = 0;
  // Which request fields it reads, for --help: "--clean --corrupt [--answer --wrong] --site".
  virtual std::string inputs() const = 0;
};

using InterpretationRegistry = Registry<Interpretation>;

// The label of token `id` in `request`, or "#id" when the request carries no vocabulary.
std::string tokenLabel(const InterpretRequest& request, int id);

}  // namespace attnlab
