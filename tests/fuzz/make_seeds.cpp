// Writes the fuzz targets' seed corpora: valid files of each format, made by the lab's own writers
// (or, for the formats other programs write, as small as they come), one folder per target.
// Usage: fuzz_make_seeds OUTDIR
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "fuzz_seeds.h"
#include "fuzz_support.h"
#include "io/comparison_file.h"
#include "io/view_state.h"
#include "io/config_json.h"
#include "tiny_hf_folder.h"

using namespace attnlab;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fs::path out;

void seed(const std::string& target, const std::string& name, const std::string& bytes) {
  fs::create_directories(out / target);
  fuzz::writeFile(out / target / name, bytes);
}

std::string fileText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A safetensors file written by hand: `header` JSON, then `data`.
std::string safetensors(const std::string& header, const std::string& data) {
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  return bytes + header + data;
}

void safetensorsSeeds(const fs::path& work) {
  ParamStore lab = fuzz::labParams();
  for (auto& p : lab.all()) p->value.setRandom();
  writeSafetensors((work / "lab.safetensors").string(), lab);
  seed("safetensors_lab", "saved.safetensors", fileText(work / "lab.safetensors"));

  tiny_hf::writeGpt2Folder(work / "gpt2", 1, 1, 4, 8);
  seed("safetensors_hf", "gpt2.safetensors", fileText(work / "gpt2" / "model.safetensors"));
  seed("safetensors_hf", "f16-bf16-f64.safetensors",
       safetensors(R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},)"
                   R"("b":{"dtype":"BF16","shape":[1,2],"data_offsets":[4,8]},"c":{"dtype":"F64","shape":[1],"data_offsets":[8,16]}})",
                   std::string("\x00\x3c\x00\xc0\x80\x3f\x00\x40", 8) + std::string("\0\0\0\0\0\0\xf0\x3f", 8)));

  json index = {{"metadata", {{"total_size", 224}}}, {"weight_map", {{"wte.weight", fuzz::kShards[0]}, {"wpe.weight", fuzz::kShards[1]}}}};
  seed("shard_index", "index.json", index.dump(2));
}

void configSeeds(const fs::path& work) {
  for (const std::string& name : presetNames()) {
    ExperimentConfig config;
    if (loadPreset(name, config).empty()) seed("config_lab", name + ".json", configToJson(config));
  }
  tiny_hf::writeLlamaFolder(work / "llama", 1, 2, 1, 8, 8);
  seed("config_hf", "gpt2.json", fileText(work / "gpt2" / "config.json"));
  seed("config_hf", "llama.json", fileText(work / "llama" / "config.json"));
  seed("config_hf", "llama3.json",
       json{{"model_type", "llama"}, {"vocab_size", 64}, {"hidden_size", 8}, {"intermediate_size", 16}, {"num_hidden_layers", 1},
            {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"rope_theta", 500000.0}, {"tie_word_embeddings", true},
            {"rope_scaling", {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                              {"original_max_position_embeddings", 8192}}}}
           .dump());
  seed("config_hf", "qwen2.json",
       json{{"model_type", "qwen2"}, {"vocab_size", 64}, {"hidden_size", 8}, {"intermediate_size", 16}, {"num_hidden_layers", 1},
            {"num_attention_heads", 2}, {"num_key_value_heads", 2}, {"use_sliding_window", false}}
           .dump());
  seed("config_hf", "gpt_neox.json",
       json{{"model_type", "gpt_neox"}, {"vocab_size", 64}, {"hidden_size", 8}, {"num_hidden_layers", 1}, {"num_attention_heads", 2},
            {"rotary_pct", 0.5}, {"use_parallel_residual", true}, {"hidden_act", "gelu"}}
           .dump());
}

void tokenizerSeeds(const fs::path& work) {
  seed("tokenizer_json", "byte_level.json", fileText(work / "gpt2" / "tokenizer.json"));
  TokenizerSpec spec;
  if (parseTokenizerJson(fileText(work / "gpt2" / "tokenizer.json"), "tokenizer.json", spec).empty()) {
    seed("tokenizer_json", "byte_level_written.json", byteLevelTokenizerJson(spec));
    json vocab = json::object();
    for (size_t id = 0; id < spec.vocab.size(); ++id)
      if (!spec.vocab[id].empty()) vocab[spec.vocab[id]] = id;
    std::string merges = "#version: 0.2\n";
    for (const auto& [l, r] : spec.merges) merges += l + " " + r + "\n";
    seed("vocab_merges", "gpt2.txt", vocab.dump() + std::string(1, '\0') + merges);
  }
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    vocab[name] = vocab.size();
  }
  for (const char* piece : {"\u2581", "a", "b", "\u2581a", "ab"}) vocab[piece] = vocab.size();
  const json sentencePiece = {
      {"added_tokens", {{{"id", 0}, {"content", "<unk>"}, {"special", true}}, {{"id", 1}, {"content", "<s>"}, {"special", true}}}},
      {"normalizer", {{"type", "Sequence"},
                      {"normalizers", {{{"type", "Prepend"}, {"prepend", "\u2581"}},
                                       {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}}}}},
      {"pre_tokenizer", nullptr},
      {"decoder", {{"type", "Sequence"}, {"decoders", json::array({{{"type", "ByteFallback"}}, {{"type", "Fuse"}}})}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"\u2581 a", "a b"}}, {"byte_fallback", true}, {"unk_token", "<unk>"},
                 {"fuse_unk", true}}}};
  seed("tokenizer_json", "sentencepiece.json", sentencePiece.dump());
}

void labFileSeeds(const fs::path& work, const fs::path& source) {
  std::vector<TrainPoint> history(3);
  for (int i = 0; i < 3; ++i) {
    history[i].step = i + 1;
    history[i].loss = 3.0 - i;
    history[i].lr = 1e-3;
    history[i].layer_grad_norm = {0.5, 0.25};
    history[i].layer_entropy = {1.5, 1.25};
  }
  history[2].val_loss = 1.5;
  history[2].accuracy = 0.5;
  writeHistoryCsv((work / "history.csv").string(), history);
  seed("history_csv", "history.csv", fileText(work / "history.csv"));

  ComparisonDocument document;
  for (const char* preset : {"induction", "copy"}) {
    ComparisonRun run;
    loadPreset(preset, run.config);
    run.checkpoint = std::string("runs/") + preset;
    document.runs.push_back(run);
  }
  document.probe = {1, 2, 3};
  document.budget = "25%";
  seed("comparison", "two.attnlab-compare", comparisonToJson(document));
  seed("view_state", "view_state.json", viewStateToJson({"kv", {1, 2, 3}, 1, 0, true, "h2o", "25%"}));

  for (const auto& entry : fs::directory_iterator(source / "resources" / "tours"))
    if (entry.path().extension() == ".tour") seed("tour", entry.path().filename().string(), fileText(entry.path()));

  const std::string text =
      "The quick brown fox jumps over the lazy dog. Attention weighs every earlier token; the heads learn to copy.\n"
      "Gr\xC3\xBC\xC3\x9F" "e, \xE4\xB8\x96\xE7\x95\x8C, \xF0\x9F\x98\x80 and tabs\tand lines\n";
  seed("text_corpus", "characters.txt", std::string(1, '\0') + text + text);
  seed("text_corpus", "bpe.txt", std::string(1, '\x03') + "\xEF\xBB\xBF" + text + text);

  seed("cli_flags", "train.txt", "--preset\ninduction\n--set\nmodel.d_model=32\n--set=train.lr=1e-3\n--steps\n200\n--seed\n7\n--threads\n2\n");
  seed("cli_flags", "generate.txt", "--ids\n1,2,3\n--policy\nh2o\n--budget\n25%\n--budget-scope\nlayer\n--policy-set\nsinks=4\n");
  seed("cli_flags", "lists.txt", "--lengths\n1,2,4.5\n--seeds\n1,2,3\n--budgets\n12.5%,50%\n--policies\nwindow,h2o\n--target-ids\n3,1,4\n--top-k\n5\n--lr\n0.01\n");
  seed("cli_flags", "scale.txt", "--preset\ncopy\n--scale\nd_model=768,n_layers=12,n_heads=12\n--devices\n8\n--tokens-per-second\n1e6\n--fsdp\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_make_seeds OUTDIR\n";
    return 2;
  }
  out = argv[1];
  const fs::path work = out / ".work";
  fs::create_directories(work);
  safetensorsSeeds(work);
  configSeeds(work);
  tokenizerSeeds(work);
  labFileSeeds(work, ATTNLAB_SOURCE_DIR);
  fs::remove_all(work);
  return 0;
}
