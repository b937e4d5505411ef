// interpret: the causal analyses of engine/interpret/ (patching, logit lens, direct logit
// attribution, head composition, retrieval heads, input attribution) on a lab checkpoint or a
// Hugging Face folder (text through its tokenizer, or ids).
#include <omp.h>

#include <iostream>
#include <sstream>

#include "analysis/analysis.h"
#include "cli_error.h"
#include "command.h"
#include "interpret/interpretation.h"
#include "interpret/passkey_prompts.h"
#include "list_flags.h"
#include "opened_model.h"
#include "setup.h"

namespace attnlab::cli {
namespace {

// The prompt given as --<flag> TEXT or --<flag>-ids LIST (--text pairs with --ids); empty when neither.
std::vector<int> prompt(const Args& args, const std::string& flag, const std::string& idFlag, const OpenedModel& opened) {
  if (args.has(flag) && args.has(idFlag)) throw CliError("give --" + flag + " or --" + idFlag + ", not both");
  if (args.has(idFlag)) return parseIdList(idFlag, args.text(idFlag), opened.model().config().vocab);
  if (args.has(flag)) return encodeText(args, opened, flag);
  return {};
}

// One token given as --<flag> TOKEN (its text in the vocabulary) or --<flag>-id N; -1 when neither.
int singleToken(const Args& args, const std::string& flag, const OpenedModel& opened) {
  const std::string idFlag = flag + "-id";
  if (args.has(flag) && args.has(idFlag)) throw CliError("give --" + flag + " or --" + idFlag + ", not both");
  const int vocab = opened.model().config().vocab;
  if (args.has(idFlag)) return static_cast<int>(args.integer(idFlag, -1, 0, vocab - 1));
  if (!args.has(flag)) return -1;
  const int id = opened.vocabulary().id(args.text(flag));
  if (id < 0) throw CliError("--" + flag + ": '" + args.text(flag) + "' is not a token of the model's vocabulary");
  return id;
}

// A lab checkpoint's task marks the answers (passkey, recall, induction); a Hugging Face folder
// gets passkey prompts written with its own tokenizer.
std::vector<Batch> retrievalSequences(const Args& args, const OpenedModel& opened, uint64_t seed) {
  if (!opened.isHf()) {
    if (args.has("length")) throw CliError("--length is for Hugging Face folders: a lab checkpoint's task sets its sequences' length");
    return validationBatches(*opened.checkpoint.trainer, static_cast<int>(args.integer("batches", 4, 1, 1000)), seed);
  }
  if (!opened.tokenizerProblem.empty())
    throw CliError("retrieval writes passkey prompts with the folder's tokenizer (" + opened.tokenizerProblem + ")");
  const ModelConfig& c = opened.model().config();
  PasskeyPromptOptions o;
  o.length = static_cast<int>(args.integer("length", defaultPasskeyLength(c.context), 2, c.context));
  o.batches = static_cast<int>(args.integer("batches", 1, 1, 1000));
  o.seed = seed;
  try {
    return passkeyPrompts(*opened.vocabulary().tokenizer(), c.vocab, c.context, o);
  } catch (const std::invalid_argument& error) {
    throw CliError(std::string("retrieval: ") + error.what());
  }
}

InterpretRequest requestFrom(const Args& args, const std::string& kind, const OpenedModel& opened) {
  InterpretRequest r;
  r.tokens = prompt(args, "text", "ids", opened);
  r.clean = prompt(args, "clean", "clean-ids", opened);
  r.corrupt = prompt(args, "corrupt", "corrupt-ids", opened);
  r.answer = singleToken(args, "answer", opened);
  r.wrong = singleToken(args, "wrong", opened);
  r.token = singleToken(args, "token", opened);
  r.site = args.text("site", "resid");
  r.perPosition = args.has("per-position");
  r.top_k = static_cast<int>(args.integer(kind == "retrieval" ? "k" : "top", kind == "retrieval" ? 2 : 5, 0, 1000));
  r.seed = static_cast<uint64_t>(args.integer("seed", 1, 0, std::numeric_limits<long long>::max()));
  r.labels = opened.vocabulary().tokens();
  if (kind == "patch" && (r.clean.empty() || r.corrupt.empty())) throw CliError("patch needs --clean and --corrupt (or --clean-ids and --corrupt-ids)");
  if ((kind == "lens" || kind == "dla" || kind == "attribution") && r.tokens.empty()) throw CliError(kind + " needs --text or --ids");
  if (kind == "retrieval") r.sequences = retrievalSequences(args, opened, r.seed);
  return r;
}

int runInterpret(const Args& args) {
  const std::string kind = args.text("subcommand");
  const OpenedModel opened = openAnyModel(args);
  const int threads = threadsFrom(args, opened.threads());
  omp_set_num_threads(threads);
  Eigen::setNbThreads(threads);
  const InterpretRequest request = requestFrom(args, kind, opened);
  const auto interpretation = InterpretationRegistry::instance().create(kind);
  Json result;
  try {
    result = interpretation->run(opened.model(), request);
  } catch (const std::invalid_argument& error) {
    throw CliError(kind + ": " + error.what());
  }
  if (args.has("json")) {
    Json out = {{"format", "attnlab-interpret-1"}, {"kind", kind}, {"model", args.text("model")}};
    for (auto& [key, value] : result.items()) out[key] = value;
    std::cout << out.dump() << std::endl;
  } else {
    std::cout << interpretation->describe(result);
  }
  return 0;
}

std::vector<std::string> kinds() {
  std::vector<std::string> out;
  for (const auto& e : InterpretationRegistry::instance().entries()) out.push_back(e.name);
  return out;
}

}  // namespace

Command interpretCommand() {
  return {"interpret",
          "KIND --model DIR [inputs] [--json]",
          "causal interpretability: activation patching, logit lens, direct logit attribution, composition, retrieval",
          {{"subcommand", "KIND", "the analysis, given as the first argument (see Kinds below)"},
           {"model", "DIR", "a checkpoint folder written by 'attnlab-cli train' or the app, or a Hugging Face model folder"},
           {"clean", "TEXT", "patch: the clean prompt"},
           {"corrupt", "TEXT", "patch: the corrupted prompt, as many tokens as the clean one"},
           {"clean-ids", "LIST", "patch: the clean prompt as token ids, e.g. 3,1,4"},
           {"corrupt-ids", "LIST", "patch: the corrupted prompt as token ids"},
           {"answer", "TOKEN", "patch: the right answer (default: the clean run's top prediction at the last position)"},
           {"answer-id", "N", "patch: the right answer as a token id"},
           {"wrong", "TOKEN", "patch: the wrong answer (default: the corrupted run's top prediction other than the answer)"},
           {"wrong-id", "N", "patch: the wrong answer as a token id"},
           {"site", "SITE", "patch: resid (default), attn_out, mlp_out, head_out, pattern or values"},
           {"per-position", "", "patch, head sites: one patch per head and position instead of per head"},
           {"text", "TEXT", "lens, dla, attribution: the prompt"},
           {"ids", "LIST", "lens, dla, attribution: the prompt as token ids"},
           {"token", "TOKEN", "lens, dla, attribution: the token followed (default: the model's prediction)"},
           {"token-id", "N", "the followed token as an id"},
           {"top", "K", "lens: tokens shown per layer and position (default 5)"},
           {"k", "K", "retrieval: heads knocked out, and RoPE pairs zeroed (default 2; 0 changes nothing)"},
           {"batches", "N", "retrieval: validation batches of the model's task (default 4), or of 4 passkey prompts on a Hugging Face folder (default 1)"},
           {"length", "T", "retrieval on a Hugging Face folder: tokens per passkey prompt (default 256, or the context when shorter)"},
           {"seed", "S", "retrieval: seed of the sequences and of the random heads (default 1)"},
           {"json", "", "print one JSON object {format, kind, model, ..., results: [rows]}"},
           threadsFlag()},
          [] {
            std::string notes = "Kinds:\n";
            for (const auto& e : InterpretationRegistry::instance().entries())
              notes += "  " + e.name + " " + e.make()->inputs() + "\n      " + e.summary + "\n";
            return notes + "Rows carry layer, position and head where they apply, and effect or value.\n"
                           "Hook points the analyses use: 'attnlab-cli hooks --model DIR'.";
          }(),
          runInterpret,
          kinds()};
}

}  // namespace attnlab::cli
