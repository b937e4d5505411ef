#pragma once
// The model a command's --model names: a lab checkpoint (with its task and vocabulary) or a
// Hugging Face folder (engine/hf), whose text goes through the folder's tokenizer (labels are its
// display forms); a folder without tokenizer files takes ids (--ids 1,2,3), labelled by id.
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "tokenizer/vocabulary.h"
#include "hf/hf_model.h"
#include "io/checkpoint.h"

namespace attnlab::cli {

struct OpenedModel {
  LoadedCheckpoint checkpoint;  // trainer null for a Hugging Face folder
  std::unique_ptr<Model> hfModel;
  hf::HfModelInfo hfInfo;
  Vocabulary hfVocabulary;     // the folder's tokenizer, or "0", "1", ... when it has none
  std::string tokenizerProblem;  // why the folder's tokenizer did not load ("" when it did)

  bool isHf() const { return hfModel != nullptr; }
  const Model& model() const { return isHf() ? *hfModel : checkpoint.trainer->model(); }
  const Vocabulary& vocabulary() const { return isHf() ? hfVocabulary : checkpoint.trainer->task().vocabulary(); }
  int threads() const { return isHf() ? 2 : checkpoint.config.train.threads; }
};

// Opens --model (either kind); throws CliError with the loader's one-line reason.
OpenedModel openAnyModel(const Args& args);

FlagSpec idsFlag();  // --ids 1,2,3
// The ids of --ids, each checked against the vocabulary size; throws CliError naming a bad entry.
std::vector<int> idsFlagValue(const Args& args, int vocab);
// The tokens of --<textFlag> (the checkpoint's vocabulary) or --ids; exactly one must be given
// (a Hugging Face model's text gets the BOS its tokenizer files ask for).
std::vector<int> tokensFrom(const Args& args, const OpenedModel& opened, const std::string& textFlag);
// The text of --<textFlag> encoded for either kind of model (as tokensFrom without --ids).
std::vector<int> encodeText(const Args& args, const OpenedModel& opened, const std::string& textFlag);

}  // namespace attnlab::cli
