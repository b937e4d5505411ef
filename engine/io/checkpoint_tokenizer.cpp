#include "io/checkpoint_tokenizer.h"

#include <filesystem>

#include "io/checkpoint.h"
#include "core/files.h"
#include "tokenizer/tokenizer_files.h"

namespace attnlab {

namespace {
constexpr const char* kTokenizerFile = "tokenizer.json";

// A learned BPE is saved; a pretrained model's tokenizer stays in the folder task.tokenizer names.
const Tokenizer* learnedTokenizer(const Trainer& trainer) {
  return trainer.config().task.tokenizer.empty() ? trainer.task().vocabulary().tokenizer() : nullptr;
}
}  // namespace

std::string writeCheckpointTokenizer(const std::string& folder, const Trainer& trainer) {
  const Tokenizer* tokenizer = learnedTokenizer(trainer);
  if (!tokenizer) return {};
  return writeFileAtomic((std::filesystem::path(folder) / kTokenizerFile).string(), byteLevelTokenizerJson(tokenizer->spec()));
}

std::string checkCheckpointTokenizer(const std::string& folder, const Trainer& trainer) {
  const Tokenizer* tokenizer = learnedTokenizer(trainer);
  if (!tokenizer) return {};
  const std::string path = (std::filesystem::path(folder) / kTokenizerFile).string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return path + ": missing (the model was trained on a learned BPE)";
  std::string text;
  if (std::string why = readWholeFile(path, text); !why.empty()) return why;
  TokenizerSpec saved;
  if (std::string why = parseTokenizerJson(text, path, saved); !why.empty()) return why;
  if (saved.vocab != tokenizer->spec().vocab || saved.merges != tokenizer->spec().merges)
    return path + ": differs from the BPE learned again from '" + trainer.config().task.text_path +
           "' (has the text file changed since the checkpoint was saved?)";
  return {};
}

}  // namespace attnlab
