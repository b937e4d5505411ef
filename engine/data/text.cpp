// text: a character-level model of the user's UTF-8 file (TaskConfig::text_path). The file's
// first 90% of characters trains and the last 10% validates; sequences are random windows of
// one part. The vocabulary is every character of the file, in code point order, or with
// bpe_vocab = N a byte-level BPE of N tokens learned from the whole file (tokenizer/bpe_trainer.h),
// or with task.tokenizer the tokenizer files of a pretrained model's folder (fine-tuning it).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>

#include "data/task_support.h"
#include "core/utf8.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/tokenizer_files.h"

namespace attnlab {
namespace {

constexpr long kMinCharacters = 100;            // so that the held-out 10% holds a few sequences' worth
constexpr uintmax_t kMaxBytes = 64ull << 20;  // ids take 4 bytes per character in memory

const SettingSpec kBpeVocab{"bpe_vocab", 0, 0, 65536, true,
                            "0: one token per character; N > 256: a byte-level BPE of N tokens learned from the file"};
const SettingSpec kVocabRows{"vocab_rows", 0, 0, 1 << 24, true,
                             "with task.tokenizer: the model's embedding rows, when more than the tokenizer's tokens (padding ids)"};

// The tokenizer of a pretrained model's folder (TaskConfig::tokenizer), its vocabulary padded to
// `rows` ids where the model has more embedding rows than tokens (as Qwen2 has).
std::string pretrainedVocabulary(const std::string& folder, int rows, Vocabulary& out) {
  std::string error;
  std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(folder, error);
  if (tokenizer && tokenizer->vocabSize() < rows) {
    TokenizerSpec padded = tokenizer->spec();
    padded.vocab.resize(rows);
    tokenizer = makeTokenizer(padded, error);
  }
  if (!tokenizer) return "task text: task.tokenizer: " + error;
  out = Vocabulary(std::shared_ptr<const Tokenizer>(std::move(tokenizer)));
  return {};
}

class TextTask : public Task {
 public:
  std::vector<SettingSpec> settingSpecs() const override { return {kBpeVocab, kVocabRows}; }

  std::string configure(const TaskConfig& config) override {
    std::string error = checkTaskSettings(config.settings, settingSpecs(), "text");
    if (!error.empty()) return error;
    std::string bytes;
    error = readFile(config.text_path, bytes);
    if (!error.empty()) return error;
    const std::string quoted = "'" + config.text_path + "'";
    if (bytes.rfind("\xEF\xBB\xBF", 0) == 0) bytes.erase(0, 3);  // a byte order mark is not text
    if (bytes.empty()) return "task text: " + quoted + " is empty";
    const size_t invalid = firstInvalidUtf8(bytes);
    if (invalid != std::string::npos)
      return "task text: " + quoted + " is not UTF-8 text (invalid byte at offset " + std::to_string(invalid) + ")";

    std::set<std::string> characters;
    long count = 0;
    for (size_t pos = 0; pos < bytes.size(); ++count) {
      const int length = utf8CodePointLength(bytes, pos);
      characters.insert(bytes.substr(pos, length));
      pos += length;
    }
    if (count < kMinCharacters)
      return "task text: " + quoted + " is too short (" + std::to_string(count) + " characters); it needs at least " +
             std::to_string(kMinCharacters) + " so that its last 10% can validate";
    const int bpeVocab = static_cast<int>(settingOr(config.settings, kBpeVocab));
    if (!config.tokenizer.empty()) {
      if (bpeVocab > 0) return "task text: bpe_vocab and task.tokenizer exclude each other (a tokenizer is learned or given)";
      error = pretrainedVocabulary(config.tokenizer, static_cast<int>(settingOr(config.settings, kVocabRows)), vocabulary_);
      if (!error.empty()) return error;
    } else if (bpeVocab > 0) {
      error = learnSubwordVocabulary(bytes, bpeVocab, vocabulary_);
    } else {
      vocabulary_ =
          Vocabulary(std::vector<std::string>(characters.begin(), characters.end()), Vocabulary::Level::Character);
    }
    if (!error.empty()) return "task text: bpe_vocab: " + error;
    std::vector<int> ids;
    if (!vocabulary_.encode(bytes, ids, error)) return "task text: " + error;
    const auto trainCount = static_cast<long>(ids.size()) * 9 / 10;
    train_.assign(ids.begin(), ids.begin() + trainCount);
    validation_.assign(ids.begin() + trainCount, ids.end());
    path_ = config.text_path;
    return {};
  }

  const Vocabulary& vocabulary() const override { return vocabulary_; }
  // The held-out part is the shorter one: a sequence must fit it, plus its last target.
  int sequenceLength(int context) const override { return std::min(context, static_cast<int>(validation_.size()) - 1); }
  bool hasAnswers() const override { return false; }

  Batch sample(int batch, int seqLen, Split split, Rng& rng) const override {
    checkBatchShape("text", batch, seqLen, minSequenceLength());
    const std::vector<int>& part = split == Split::Train ? train_ : validation_;
    const long windows = static_cast<long>(part.size()) - seqLen;
    if (windows < 1)
      throw std::invalid_argument("task text: sequences of " + std::to_string(seqLen) + " characters do not fit the " +
                                  (split == Split::Train ? "training" : "validation") + " part of '" + path_ + "' (" +
                                  std::to_string(part.size()) + " characters); use a shorter context or a longer file");
    Batch out = emptyBatch(batch, seqLen);
    for (int row = 0; row < batch; ++row) {
      const long start = std::uniform_int_distribution<long>(0, windows - 1)(rng.engine());
      std::copy_n(part.begin() + start, seqLen, out.inputs.begin() + static_cast<long>(row) * seqLen);
      std::copy_n(part.begin() + start + 1, seqLen, out.targets.begin() + static_cast<long>(row) * seqLen);
    }
    return out;
  }

 private:
  static std::string readFile(const std::string& path, std::string& bytes) {
    if (path.empty()) return "task text: no file given; set task.text_path to a UTF-8 text file";
    const std::string quoted = "'" + path + "'";
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status)) return "task text: cannot open " + quoted + ": no such file";
    if (std::filesystem::is_directory(status)) return "task text: " + quoted + " is a folder, not a file";
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxBytes)
      return "task text: " + quoted + " is " + std::to_string(size >> 20) + " MiB; the limit is " +
             std::to_string(kMaxBytes >> 20) + " MiB";
    std::ifstream in(path, std::ios::binary);
    if (!in) return "task text: cannot read " + quoted + " (permission denied?)";
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) return "task text: reading " + quoted + " failed";
    return {};
  }

  Vocabulary vocabulary_;
  std::vector<int> train_, validation_;
  std::string path_;
};

ATTNLAB_REGISTER(TaskRegistry, "text", "characters of a UTF-8 file: the first 90% trains, the last 10% validates",
                 [] { return std::make_unique<TextTask>(); });

}  // namespace
}  // namespace attnlab
