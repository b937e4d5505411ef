#include "opened_model.h"

#include <omp.h>

#include <charconv>

#include "cli_error.h"
#include "setup.h"
#include "hf/hf_vocabulary.h"

namespace attnlab::cli {

OpenedModel openAnyModel(const Args& args) {
  OpenedModel opened;
  const std::string dir = args.required("model");
  if (!hf::isHfFolder(dir)) {
    opened.checkpoint = openModel(args);
    return opened;
  }
  if (std::string why = hf::openHfModel(dir, opened.hfModel, opened.hfInfo); !why.empty()) throw CliError(why);
  opened.hfVocabulary = hf::hfVocabulary(dir, opened.hfInfo.config.vocab, opened.tokenizerProblem);
  omp_set_num_threads(threadsFrom(args, 2));
  return opened;
}

FlagSpec idsFlag() { return {"ids", "1,2,3", "input as token ids, comma-separated (any model; how a Hugging Face model takes input)"}; }

std::vector<int> idsFlagValue(const Args& args, int vocab) {
  const std::string text = args.required("ids");
  std::vector<int> ids;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    int id = -1;
    const char* first = text.data() + start;
    const auto [ptr, ec] = std::from_chars(first, text.data() + end, id);
    if (ec != std::errc() || ptr != text.data() + end || id < 0 || id >= vocab)
      throw CliError("--ids entry " + std::to_string(ids.size() + 1) + " \"" + text.substr(start, end - start) +
                     "\" is not a token id in [0, " + std::to_string(vocab - 1) + "]");
    ids.push_back(id);
    start = end + 1;
  }
  return ids;
}

std::vector<int> tokensFrom(const Args& args, const OpenedModel& opened, const std::string& textFlag) {
  if (args.has("ids")) {
    if (args.has(textFlag)) throw CliError("give one of --" + textFlag + " or --ids");
    return idsFlagValue(args, opened.model().config().vocab);
  }
  return encodeText(args, opened, textFlag);
}

std::vector<int> encodeText(const Args& args, const OpenedModel& opened, const std::string& textFlag) {
  if (!opened.isHf()) return encodeFlag(args, textFlag, *opened.checkpoint.trainer);
  if (!opened.tokenizerProblem.empty())
    throw CliError("--" + textFlag + " needs the folder's tokenizer (" + opened.tokenizerProblem + "); give --ids 1,2,3");
  std::vector<int> ids;
  if (std::string why = hf::encodeForModel(opened.hfVocabulary, args.required(textFlag), opened.model().config().vocab, ids); !why.empty())
    throw CliError("--" + textFlag + ": " + why);
  return ids;
}

}  // namespace attnlab::cli
