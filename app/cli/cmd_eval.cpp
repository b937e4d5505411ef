// eval: validation metrics of a saved model.
#include <cmath>
#include <iostream>

#include "cli_error.h"
#include "command.h"
#include "format.h"
#include "model/workspace.h"
#include "opened_model.h"
#include "setup.h"

namespace attnlab::cli {
namespace {

// A Hugging Face model has no task: it is scored on the sequence --ids gives, each token predicted
// from those before it.
int evalIds(const Args& args, const OpenedModel& opened) {
  const std::vector<int> ids = idsFlagValue(args, opened.model().config().vocab);
  if (ids.size() < 2) throw CliError("--ids needs at least 2 tokens to score a prediction");
  if (static_cast<int>(ids.size()) > opened.model().config().context)
    throw CliError("--ids has " + std::to_string(ids.size()) + " tokens but the model's context is " +
                   std::to_string(opened.model().config().context));
  std::vector<int> targets(ids.begin() + 1, ids.end());
  targets.push_back(-1);
  auto ws = makeWorkspace();
  const double loss = opened.model().forward(*ws, ids.data(), targets.data(), 1, static_cast<int>(ids.size()));
  const long tokens = static_cast<long>(ids.size()) - 1;
  if (args.has("json")) {
    std::cout << Json{{"model", args.text("model")}, {"tokens", tokens}, {"loss", numberOrNull(loss)},
                      {"perplexity", numberOrNull(std::exp(loss))}}.dump()
              << std::endl;
    return 0;
  }
  std::cout << "sequence     " << ids.size() << " ids (" << tokens << " scored predictions)\n"
            << "loss         " << fixed(loss, 4) << "\n"
            << "perplexity   " << fixed(std::exp(loss), 3) << std::endl;
  return 0;
}

int runEval(const Args& args) {
  if (args.has("ids")) return evalIds(args, openAnyModel(args));
  if (hf::isHfFolder(args.required("model"))) throw CliError(args.text("model") + " is a Hugging Face model: score it on --ids 1,2,3");
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
          "--model DIR [--batches N | --ids 1,2,3] [--json]",
          "evaluate a saved model on its task's validation data",
          {modelFlag(),
           {"batches", "N", "validation batches (default: the model's train.eval_batches)"},
           idsFlag(),
           threadsFlag(),
           {"json", "", "print one JSON object: {loss, perplexity, accuracy, exact_match, tokens, ...}"}},
          "With --ids (any model; how a Hugging Face folder is scored) the loss is the mean next-token\n"
          "cross-entropy over that one sequence.\n"
          "Accuracy and exact match are n/a (null in JSON) for tasks without answers, such as language modelling.",
          runEval};
}

}  // namespace attnlab::cli
