// eval: validation metrics of a saved model, at its training length or (--lengths) at multiples of it;
// or, with --ids or --text, the next-token loss on one sequence (how a Hugging Face folder is scored).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli_error.h"
#include "command.h"
#include "eviction_flags.h"
#include "format.h"
#include "kv/live_cache_eval.h"
#include "list_flags.h"
#include "kv/kv_bytes.h"
#include "model/workspace.h"
#include "opened_model.h"
#include "setup.h"
#include "train/length_eval.h"

namespace attnlab::cli {
namespace {

Json resultJson(const EvalResult& r) {
  return {{"tokens", r.tokens},
          {"loss", numberOrNull(r.loss)},
          {"perplexity", numberOrNull(r.perplexity)},
          {"accuracy", numberOrNull(r.accuracy)},
          {"exact_match", numberOrNull(r.exact_match)}};
}

std::string multipleText(double m) {
  std::ostringstream s;
  s << m << "x";
  return s.str();
}

// One row per multiple m: the metrics on sequences of round(m x training length) tokens.
int runLengths(const Args& args, LoadedCheckpoint& loaded, int batches) {
  const std::vector<double> multiples = parseMultiples(args.text("lengths"));
  const int trained = loaded.trainer->sequenceLength();
  std::vector<std::pair<int, EvalResult>> rows;
  for (const double m : multiples) {
    const int length = std::max(1, static_cast<int>(std::lround(m * trained)));
    rows.emplace_back(length, evaluateAtLength(*loaded.trainer, length, batches));  // ConfigError (exit 2) when it cannot
  }
  if (args.has("json")) {
    Json lengths = Json::array();
    for (size_t i = 0; i < rows.size(); ++i) {
      Json row = {{"multiple", multiples[i]}, {"length", rows[i].first}};
      row.update(resultJson(rows[i].second));
      lengths.push_back(row);
    }
    const Json result = {{"model", args.text("model")},         {"task", loaded.config.task.name},
                         {"positional", loaded.config.model.positional}, {"training_length", trained},
                         {"context", loaded.config.model.context}, {"batches", batches},
                         {"lengths", lengths}};
    std::cout << result.dump() << std::endl;
    return 0;
  }
  std::cout << "task " << loaded.config.task.name << ", positions " << loaded.config.model.positional << ", trained on "
            << trained << " tokens (" << batches << " validation batches per length)\n"
            << std::left << std::setw(10) << "multiple" << std::setw(8) << "length" << std::setw(10) << "loss" << std::setw(12)
            << "perplexity" << std::setw(10) << "accuracy" << "exact match\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const EvalResult& r = rows[i].second;
    std::cout << std::setw(10) << multipleText(multiples[i]) << std::setw(8) << rows[i].first << std::setw(10) << fixed(r.loss, 4)
              << std::setw(12) << fixed(r.perplexity, 3) << std::setw(10) << percent(r.accuracy) << percent(r.exact_match) << "\n";
  }
  std::cout.flush();
  return 0;
}

// A Hugging Face model has no task: it is scored on the sequence --ids or --text gives, each token
// predicted from those before it.
int evalIds(const Args& args, const OpenedModel& opened) {
  const std::vector<int> ids = tokensFrom(args, opened, "text");
  if (ids.size() < 2) throw CliError("the sequence needs at least 2 tokens to score a prediction");
  if (static_cast<int>(ids.size()) > opened.model().config().context)
    throw CliError("the sequence has " + std::to_string(ids.size()) + " tokens but the model's context is " +
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

// Teacher-forced through the KV cache (--policy, --budget, --kv-quant): each held-out sequence is
// decoded token by token, every prediction made from the entries live at that step, as stored.
int evalThroughCache(const Args& args, const LoadedCheckpoint& loaded) {
  const LiveCacheSetup setup = evictionFromFlags(args);
  const int sequences = static_cast<int>(args.integer("sequences", 8, 1, 100000));
  const Model& model = loaded.trainer->model();
  const int length = trainingSequenceLength(loaded.config, loaded.trainer->task());
  LiveCacheResult r;
  try {
    r = evaluateLiveCache(model, heldOutSequences(loaded.trainer->task(), sequences, length, loaded.config.train.seed), setup);
  } catch (const std::invalid_argument& e) {
    throw CliError(e.what());
  }
  // what the same steps hold in float32 with nothing evicted: positions seen x bytes per token
  const double dense = static_cast<double>(kvCacheBytesPerToken(model.config())) * (length + 1) / 2.0;
  if (args.has("json")) {
    std::cout << Json{{"model", args.text("model")}, {"policy", setup.policy}, {"budget", setup.budget.describe()},
                      {"kv_quant", kvQuantName(setup.quant)}, {"tokens", r.tokens}, {"loss", numberOrNull(r.loss)},
                      {"perplexity", numberOrNull(r.perplexity)}, {"live_share", r.liveShare}, {"mean_bytes", r.meanBytes},
                      {"dense_fp32_mean_bytes", dense}}.dump()
              << std::endl;
    return 0;
  }
  std::cout << "through the KV cache: policy " << setup.policy << ", budget " << setup.budget.describe() << ", "
            << kvQuantName(setup.quant) << " (" << sequences << " sequences of " << length << ", " << r.tokens << " scored tokens)\n"
            << "loss         " << fixed(r.loss, 4) << "\n"
            << "perplexity   " << fixed(r.perplexity, 3) << "\n"
            << "live share   " << percent(r.liveShare) << "\n"
            << "mean bytes   " << fixed(r.meanBytes, 0) << " per step (" << percent(dense > 0 ? r.meanBytes / dense : 1.0)
            << " of float32 without eviction)" << std::endl;
  return 0;
}

// --data DIR: the checkpoint evaluated on a data folder (attnlab-cli data's format) instead of its task.
LoadedCheckpoint openOnData(const Args& args) {
  if (hf::isHfFolder(args.required("model"))) throw CliError("--data needs a lab checkpoint, not a Hugging Face folder");
  LoadedCheckpoint loaded;
  if (std::string why = loadCheckpointOnData(args.required("model"), args.text("data"), loaded); !why.empty()) throw CliError(why);
  const int model = loaded.trainer->model().config().vocab, data = loaded.trainer->task().vocabulary().size();
  if (model != data)
    throw CliError(args.text("data") + ": the data's vocabulary has " + std::to_string(data) + " tokens, the model's " + std::to_string(model));
  return loaded;
}

int runEval(const Args& args) {
  if (args.has("ids") || args.has("text")) return evalIds(args, openAnyModel(args));
  if (hf::isHfFolder(args.required("model")))
    throw CliError(args.text("model") + " is a Hugging Face model: score it on --text \"...\" or --ids 1,2,3");
  LoadedCheckpoint loaded = args.has("data") ? openOnData(args) : openModel(args);
  const int batches = static_cast<int>(args.integer("batches", loaded.config.train.eval_batches, 1, 100000));
  if (args.has("lengths")) return runLengths(args, loaded, batches);
  if (args.has("policy") || args.has("budget") || args.has("kv-quant")) return evalThroughCache(args, loaded);
  const EvalResult r = loaded.trainer->evaluate(batches);
  if (args.has("json")) {
    Json result = {{"model", args.text("model")}, {"batches", batches}};
    result.update(resultJson(r));
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
          "--model DIR [--batches N | --data DIR | --ids 1,2,3 | --text \"...\"] [--lengths M1,M2,..] [--policy NAME --budget N|R% "
          "--kv-quant fp32|int8|int4 --sequences N] [--json]",
          "evaluate a saved model on its task's validation data",
          {modelFlag(),
           {"batches", "N", "validation batches (default: the model's train.eval_batches)"},
           {"data", "DIR", "evaluate on this data folder (attnlab-cli data's format, e.g. a PyTorch-exported run's) instead of the task"},
           {"lengths", "M1,M2,..", "evaluate at these multiples of the training length (length extrapolation), e.g. 1,2,4,8"},
           evictionFlags()[0], evictionFlags()[1], evictionFlags()[2], evictionFlags()[3], evictionFlags()[4],
           {"sequences", "N", "with --policy, --budget or --kv-quant: held-out sequences decoded through the cache (default 8)"},
           idsFlag(),
           {"text", "TEXT", "score this text (the task's vocabulary, or a Hugging Face folder's tokenizer with its BOS)"},
           threadsFlag(),
           {"json", "", "print one JSON object: {loss, perplexity, accuracy, exact_match, tokens, ...}; with --lengths, one row per multiple"}},
          "Accuracy and exact match are n/a (null in JSON) for tasks without answers, such as language modelling.\n"
          "--lengths runs the model on sequences longer than it was trained on. Every positional encoding but\n"
          "'learned' (a table of context rows) extrapolates; a learned-position model refuses lengths beyond its context.\n"
          "--policy, --budget or --kv-quant decode held-out sequences token by token through the KV cache (teacher-forced),\n"
          "each prediction from the live entries as stored: perplexity against the cache's mean bytes per step.\n"
          "With --ids or --text (any model; how a Hugging Face folder is scored) the loss is the mean next-token\n"
          "cross-entropy over that one sequence.",
          runEval};
}

}  // namespace attnlab::cli
