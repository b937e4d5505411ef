// tokenize: a model's tokenizer applied to a text: each token's id and what it stands for.
#include <filesystem>
#include <iostream>

#include "cli_error.h"
#include "command.h"
#include "format.h"
#include "hf/hf_model.h"
#include "hf/pretrained_copy.h"
#include "tokenizer/tokenizer_files.h"

namespace attnlab::cli {
namespace {

int runTokenize(const Args& args) {
  if (args.has("model") == args.has("tokenizer")) throw CliError("tokenize needs exactly one of --model DIR or --tokenizer FILE");
  std::string source = args.has("model") ? args.text("model") : args.text("tokenizer");
  // A checkpoint fine-tuned from a Hugging Face folder holds that folder's tokenizer in its copy.
  const std::filesystem::path kept = std::filesystem::path(source) / hf::kPretrainedFolder;
  if (args.has("model") && !hf::isHfFolder(source) && hf::isHfFolder(kept.string())) source = kept.string();
  const std::string text = args.required("text");
  std::string error;
  const auto tokenizer = loadTokenizer(source, error);
  if (!tokenizer) throw CliError(error);
  std::vector<int> ids;
  if (std::string why = tokenizer->encode(text, ids, args.has("special")); !why.empty()) throw CliError("--text: " + why);

  if (args.has("json")) {
    Json tokens = Json::array(), shown = Json::array();
    for (int id : ids) {
      tokens.push_back(tokenizer->token(id));
      shown.push_back(tokenizer->displayToken(id));
    }
    const TokenizerSpec& spec = tokenizer->spec();
    Json out = {{"tokenizer", spec.kind}, {"vocab_size", tokenizer->vocabSize()},
                {"bos", spec.bos >= 0 ? Json(spec.bos) : Json()}, {"eos", spec.eos >= 0 ? Json(spec.eos) : Json()},
                {"ids", ids}, {"tokens", tokens}, {"display", shown}};
    std::cout << out.dump(1, ' ', false, Json::error_handler_t::replace) << "\n";
    return 0;
  }
  std::cout << ids.size() << " tokens (" << tokenizer->spec().kind << ", " << tokenizer->vocabSize() << " in the vocabulary)\n";
  for (int id : ids) std::cout << "  " << std::string(std::max(0, 7 - static_cast<int>(std::to_string(id).size())), ' ') << id << "  "
                               << tokenizer->displayToken(id) << "\n";
  return 0;
}

}  // namespace

Command tokenizeCommand() {
  return {"tokenize",
          "(--model DIR | --tokenizer FILE) --text TEXT [--special] [--json]",
          "split a text into a model's tokens (ids and token strings)",
          {{"model", "DIR", "a Hugging Face model folder (tokenizer.json, or vocab.json + merges.txt) or a checkpoint with a learned tokenizer"},
           {"tokenizer", "FILE", "a tokenizer.json or vocab.json file"},
           {"text", "TEXT", "the text to tokenize (UTF-8)"},
           {"special", "", "add the special tokens the model expects around a text (BOS, as the files say)"},
           {"json", "", "print {tokenizer, vocab_size, bos, eos, ids, tokens, display} as JSON"}},
          "Tokens are shown as the text they stand for, with a leading space as \u2423, a newline as \u21B5,\n"
          "a tab as \u21E5, and bytes that are not a whole UTF-8 character as <0xNN>. In --json, \"tokens\" are\n"
          "spelled as in the vocabulary (GPT-2's \u0120 for a space, SentencePiece's \u2581) and \"display\" as above.\n",
          runTokenize};
}

}  // namespace attnlab::cli
