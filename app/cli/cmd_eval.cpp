// eval: validation metrics of a saved model.
#include <iostream>

#include "command.h"
#include "format.h"
#include "setup.h"

namespace attnlab::cli {
namespace {

int runEval(const Args& args) {
  LoadedCheckpoint loaded = openModel(args);
  const int batches = static_cast<int>(args.integer("batches", loaded.config.train.eval_batches, 1, 100000));
  const EvalResult r = loaded.trainer->evaluate(batches);
  if (args.has("json")) {
    const Json result = {{"model", args.text("model")},
                         {"batches", batches},
                         {"tokens", r.tokens},
                         {"loss", numberOrNull(r.loss)},
                         {"perplexity", numberOrNull(r.perplexity)},
                         {"accuracy", numberOrNull(r.accuracy)},
                         {"exact_match", numberOrNull(r.exact_match)}};
    std::cout << result.dump() << std::endl;
    return 0;
  }
  std::cout << "task         " << loaded.config.task.name << " (" << batches << " validation batches, " << r.tokens
            << " scored tokens)\n"
            << "loss         " << fixed(r.loss, 4) << "\n"
            << "perplexity   " << fixed(r.perplexity, 3) << "\n"
            << "accuracy     " << percent(r.accuracy) << "\n"
            << "exact match  " << percent(r.exact_match) << std::endl;
  return 0;
}

}  // namespace

Command evalCommand() {
  return {"eval",
          "--model DIR [--batches N] [--json]",
          "evaluate a saved model on its task's validation data",
          {modelFlag(),
           {"batches", "N", "validation batches (default: the model's train.eval_batches)"},
           {"json", "", "print one JSON object: {loss, perplexity, accuracy, exact_match, tokens, ...}"}},
          "Accuracy and exact match are n/a (null in JSON) for tasks without answers, such as language modelling.",
          runEval};
}

}  // namespace attnlab::cli
