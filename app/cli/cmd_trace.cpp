// trace: one forward pass with every attention map captured, written as JSON.
#include <iostream>

#include "cli_error.h"
#include "command.h"
#include "format.h"
#include "predictions.h"
#include "opened_model.h"
#include "setup.h"

namespace attnlab::cli {
namespace {

constexpr int kTopPredictions = 5;

Json floatList(const std::vector<float>& values) {
  Json out = Json::array();
  for (float v : values) out.push_back(shortFloat(v));
  return out;
}

// Rows of a matrix; entries that are not finite (masked -inf scores) become null.
Json matrixRows(const Mat& m) {
  Json rows = Json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    Json row = Json::array();
    for (Eigen::Index c = 0; c < m.cols(); ++c) row.push_back(shortFloat(m(r, c)));
    rows.push_back(std::move(row));
  }
  return rows;
}

Json layerJson(const LayerTrace& layer) {
  Json heads = Json::array();
  for (const HeadTrace& head : layer.heads) {
    Json h = {{"weights", matrixRows(head.weights)}, {"scores", matrixRows(head.scores)}};
    if (!head.gate.empty()) h["gate"] = floatList(head.gate);
    if (!head.presence.empty()) h["presence"] = floatList(head.presence);
    heads.push_back(std::move(h));
  }
  return {{"variant", layer.variant}, {"residual_norm", floatList(layer.residual_norm)}, {"heads", std::move(heads)}};
}

Json predictionsJson(const Mat& logits, const Vocabulary& vocabulary) {
  Json positions = Json::array();
  for (Eigen::Index t = 0; t < logits.rows(); ++t) {
    const std::vector<double> p = softmax(logits.row(t).data(), static_cast<int>(logits.cols()));
    Json top = Json::array();
    for (int id : topK(p, kTopPredictions))
      top.push_back({{"token", id},
                     {"label", vocabulary.token(id)},
                     {"probability", p[id]},
                     {"logit", shortFloat(logits(t, id))}});
    positions.push_back(std::move(top));
  }
  return positions;
}

Json traceJson(const Trace& trace, const std::string& modelDir, const Vocabulary& vocabulary) {
  Json layers = Json::array();
  for (const LayerTrace& layer : trace.layers) layers.push_back(layerJson(layer));
  return {{"format", "attnlab-trace-1"},
          {"model", modelDir},
          {"tokens", trace.tokens},
          {"labels", trace.labels},
          {"layers", std::move(layers)},
          {"final_residual_norm", floatList(trace.final_residual_norm)},
          {"predictions", predictionsJson(trace.logits, vocabulary)}};
}

int runTrace(const Args& args) {
  if (args.has("text") + args.has("probe") + args.has("ids") != 1)
    throw CliError("give exactly one of --text \"...\", --ids 1,2,3 or --probe");
  const std::string outPath = args.required("out");
  const OpenedModel opened = openAnyModel(args);
  if (args.has("probe") && opened.isHf()) throw CliError("--probe needs a lab checkpoint (its task's example); give --ids");
  const std::vector<int> tokens = args.has("probe") ? opened.checkpoint.trainer->probeTokens() : tokensFrom(args, opened, "text");
  const int context = opened.model().config().context;
  if (static_cast<int>(tokens.size()) > context)
    throw CliError("the input has " + std::to_string(tokens.size()) + " tokens but the model's context is " +
                   std::to_string(context));

  const Trace trace = opened.isHf() ? traceModel(opened.model(), opened.vocabulary(), tokens) : opened.checkpoint.trainer->trace(tokens);
  Json json = traceJson(trace, args.text("model"), opened.vocabulary());
  json["ids"] = trace.tokens;
  if (args.has("logits")) json["logits"] = matrixRows(trace.logits);
  const std::string text = json.dump() + "\n";
  if (std::string why = writeFileAtomic(outPath, text); !why.empty()) throw CliError(why);

  const int heads = trace.layers.empty() ? 0 : static_cast<int>(trace.layers[0].heads.size());
  if (args.has("json"))
    std::cout << Json{{"out", outPath},
                      {"tokens", trace.tokens.size()},
                      {"layers", trace.layers.size()},
                      {"heads", heads}}
                     .dump()
              << std::endl;
  else
    std::cout << "wrote " << outPath << ": " << trace.tokens.size() << " tokens, " << trace.layers.size()
              << " layers x " << heads << " heads" << std::endl;
  return 0;
}

}  // namespace

Command traceCommand() {
  return {"trace",
          "--model DIR (--text \"...\" | --ids 1,2,3 | --probe) --out FILE [--logits] [--json]",
          "capture attention maps, residual norms and predictions for one input, as JSON",
          {modelFlag(),
           {"text", "TEXT", "input in the task's vocabulary, or through a Hugging Face folder's tokenizer (with the BOS it asks for)"},
           idsFlag(),
           {"probe", "", "use the task's fixed probe example instead of --text"},
           {"logits", "", "also write the full logits per position (\"logits\"[T][vocab])"},
           threadsFlag(),
           {"out", "FILE", "JSON file to write"},
           {"json", "", "print a JSON summary {out, tokens, layers, heads} instead of a sentence"}},
          "--model takes a lab checkpoint or a Hugging Face model folder (--text through its tokenizer, as\n"
          "`tokenize --model DIR --special` splits it; labels are the tokens with a leading space as \u2423).\n"
          "The file holds: tokens (also as ids), labels; layers[] with variant, residual_norm[T] and heads[] with\n"
          "weights[T][T] and scores[T][T] (masked entries are null; gate/presence where the variant has them);\n"
          "final_residual_norm[T]; predictions[T]: the top 5 next tokens {token, label, probability, logit}.",
          runTrace};
}

}  // namespace attnlab::cli
