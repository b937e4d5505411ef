// token_files: the sequences of a data folder in the format the PyTorch export trains on
// (attnlab-cli data, resources/attnlab_torch/data.py): data.json {format "attnlab-data-1", vocab,
// seq_len, splits {train, validation}, has_answers, labels}, and <split>.tokens / <split>.targets,
// N x seq_len little-endian int32 (-1: no loss). TaskConfig::text_path names the folder. This is
// the task of a run trained outside the lab on data the lab did not generate (an imported Hugging
// Face model's corpus), so its checkpoints open and evaluate on exactly what they trained on.
// Rows are drawn at random from the split; a shorter sequence length takes each row's prefix.
// Rows are read from the files when drawn: a cluster-sized training split is not loaded.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "data/task_support.h"
#include "core/files.h"
#include "tokenizer/tokenizer_files.h"

namespace attnlab {
namespace {

constexpr const char* kFormat = "attnlab-data-1";

class TokenFilesTask : public Task {
 public:
  std::string configure(const TaskConfig& config) override {
    if (std::string why = checkTaskSettings(config.settings, {}, "token_files"); !why.empty()) return why;
    folder_ = config.text_path;
    if (folder_.empty()) return "task token_files: no data folder given; set task.text_path to a folder written by 'attnlab-cli data'";
    const std::string meta = (std::filesystem::path(folder_) / "data.json").string();
    std::string text;
    if (std::string why = readWholeFile(meta, text); !why.empty()) return "task token_files: " + why;
    nlohmann::json j;
    std::vector<std::string> labels;
    try {
      j = nlohmann::json::parse(text);
      if (j.value("format", "") != kFormat) return "task token_files: " + meta + " is not an attnlab data folder (format is not " + kFormat + ")";
      vocab_ = j.at("vocab").get<int>();
      seqLen_ = j.at("seq_len").get<int>();
      rows_[0] = j.at("splits").at("train").get<long>();
      rows_[1] = j.at("splits").at("validation").get<long>();
      hasAnswers_ = j.value("has_answers", false);
      if (j.contains("labels")) labels = j.at("labels").get<std::vector<std::string>>();
    } catch (const std::exception& e) {
      return "task token_files: " + meta + ": needs vocab, seq_len and splits.train, splits.validation as numbers (" + e.what() + ")";
    }
    if (vocab_ <= 0 || seqLen_ <= 0 || rows_[0] <= 0 || rows_[1] <= 0)
      return "task token_files: " + meta + ": vocab, seq_len and both splits must be positive";
    for (int s = 0; s < 2; ++s)
      for (const char* kind : {"tokens", "targets"}) {
        const std::string path = filePath(s, kind);
        std::error_code ec;
        const uintmax_t size = std::filesystem::file_size(path, ec);
        const uintmax_t expected = 4ull * rows_[s] * seqLen_;
        if (ec) return "task token_files: " + path + ": not found";
        if (size != expected)
          return "task token_files: " + path + ": holds " + std::to_string(size) + " bytes, expected " + std::to_string(expected) +
                 " (" + std::to_string(rows_[s]) + " sequences of " + std::to_string(seqLen_) + " int32 values, as data.json says)";
      }
    vocabulary_ = vocabularyOf(config.tokenizer, labels);
    return {};
  }

  const Vocabulary& vocabulary() const override { return vocabulary_; }
  int sequenceLength(int context) const override { return std::min(context, seqLen_); }
  bool hasAnswers() const override { return hasAnswers_; }

  Batch sample(int batch, int seqLen, Split split, Rng& rng) const override {
    checkBatchShape("token_files", batch, seqLen, minSequenceLength());
    if (seqLen > seqLen_)
      throw std::invalid_argument("task token_files: the folder holds sequences of " + std::to_string(seqLen_) + " tokens, not " +
                                  std::to_string(seqLen));
    const int s = split == Split::Train ? 0 : 1;
    std::ifstream tokens(filePath(s, "tokens"), std::ios::binary), targets(filePath(s, "targets"), std::ios::binary);
    if (!tokens || !targets) throw std::invalid_argument("task token_files: cannot read " + filePath(s, "tokens"));
    Batch out = emptyBatch(batch, seqLen);
    for (int row = 0; row < batch; ++row) {
      const long pick = std::uniform_int_distribution<long>(0, rows_[s] - 1)(rng.engine());
      readRow(tokens, pick, seqLen, out.inputs.data() + static_cast<size_t>(row) * seqLen, 0, s, "tokens");
      readRow(targets, pick, seqLen, out.targets.data() + static_cast<size_t>(row) * seqLen, -1, s, "targets");
    }
    return out;
  }

 private:
  std::string filePath(int split, const char* kind) const {
    return (std::filesystem::path(folder_) / (std::string(split == 0 ? "train." : "validation.") + kind)).string();
  }

  void readRow(std::ifstream& in, long row, int length, int* out, int lowest, int split, const char* kind) const {
    static_assert(sizeof(int) == 4, "token files hold int32");
    in.seekg(static_cast<std::streamoff>(row) * seqLen_ * 4);
    in.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(length) * 4);
    if (!in) throw std::invalid_argument("task token_files: reading " + filePath(split, kind) + " failed");
    for (int t = 0; t < length; ++t)
      if (out[t] < lowest || out[t] >= vocab_)
        throw std::invalid_argument("task token_files: " + filePath(split, kind) + " holds the id " + std::to_string(out[t]) +
                                    ", outside the vocabulary of " + std::to_string(vocab_));
  }

  // The model's own tokenizer (task.tokenizer) where it loads, padded to the data's ids; else the
  // labels data.json lists, else the ids themselves.
  Vocabulary vocabularyOf(const std::string& tokenizerFolder, const std::vector<std::string>& labels) const {
    if (!tokenizerFolder.empty()) {
      std::string error;
      std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(tokenizerFolder, error);
      if (tokenizer && tokenizer->vocabSize() < vocab_) {
        TokenizerSpec padded = tokenizer->spec();
        padded.vocab.resize(vocab_);
        tokenizer = makeTokenizer(padded, error);
      }
      if (tokenizer && tokenizer->vocabSize() == vocab_) return Vocabulary(std::shared_ptr<const Tokenizer>(std::move(tokenizer)));
    }
    if (static_cast<int>(labels.size()) == vocab_) return Vocabulary(labels, Vocabulary::Level::Word);
    return Vocabulary(numberSymbols(vocab_), Vocabulary::Level::Word);
  }

  std::string folder_;
  int vocab_ = 0, seqLen_ = 0;
  long rows_[2] = {0, 0};
  bool hasAnswers_ = false;
  Vocabulary vocabulary_;
};

ATTNLAB_REGISTER(TaskRegistry, "token_files",
                 "a data folder of token files (attnlab-cli data's format; text_path names it): what an exported run trained on",
                 [] { return std::make_unique<TokenFilesTask>(); });

}  // namespace
}  // namespace attnlab
