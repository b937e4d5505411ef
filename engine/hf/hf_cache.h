#pragma once
// The models in the local Hugging Face cache, found without asking:
// $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub, holding
// models--ORG--NAME/snapshots/HASH/ folders (refs/main names the current HASH).
#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::hf {

struct CachedModel {
  std::string name;        // "ORG/NAME"
  std::string path;        // the snapshot folder to open
  std::string model_type;  // from config.json ("" when unreadable)
  uint64_t parameters = 0;
  uint64_t bytes = 0;      // files in the snapshot (through the cache's symlinks)
  std::string problem;     // why it would not open ("" when it looks openable)
};

std::string hfCacheRoot();
// Every models--* entry under `root`, sorted by name; an absent root gives none.
std::vector<CachedModel> scanHfCache(const std::string& root);

}  // namespace attnlab::hf
