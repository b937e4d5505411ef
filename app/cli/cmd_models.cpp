// models: the Hugging Face models found in the local cache, with name, size and architecture.
#include <iostream>

#include "command.h"
#include "format.h"
#include "hf/hf_cache.h"

namespace attnlab::cli {
namespace {

std::string sizeText(uint64_t bytes) {
  if (bytes >= 1000000000ull) return fixed(bytes / 1e9, 2) + " GB";
  return fixed(bytes / 1e6, 1) + " MB";
}

int runModels(const Args& args) {
  const std::string root = args.text("cache", hf::hfCacheRoot());
  const std::vector<hf::CachedModel> models = hf::scanHfCache(root);
  if (args.has("json")) {
    Json list = Json::array();
    for (const auto& m : models)
      list.push_back({{"name", m.name}, {"path", m.path}, {"architecture", m.model_type}, {"parameters", m.parameters},
                      {"bytes", m.bytes}, {"problem", m.problem}});
    std::cout << Json{{"cache", root}, {"models", list}}.dump() << std::endl;
    return 0;
  }
  if (models.empty()) {
    std::cout << "no models in the Hugging Face cache at " << root << std::endl;
    return 0;
  }
  std::cout << "Hugging Face cache: " << root << "\n";
  for (const auto& m : models) {
    std::cout << "  " << m.name << "  " << (m.model_type.empty() ? "?" : m.model_type) << "  " << sizeText(m.bytes);
    if (m.parameters) std::cout << "  " << fixed(m.parameters / 1e6, 1) << "M parameters";
    std::cout << "\n    " << m.path << "\n";
    if (!m.problem.empty()) std::cout << "    does not open: " << m.problem << "\n";
  }
  std::cout << std::flush;
  return 0;
}

}  // namespace

Command modelsCommand() {
  return {"models",
          "[--cache DIR] [--json]",
          "list the models in the local Hugging Face cache (open one with --model PATH)",
          {{"cache", "DIR", "the hub cache folder (default $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub)"},
           {"json", "", "print {cache, models: [{name, path, architecture, parameters, bytes, problem}]}"}},
          "Each model's current snapshot (refs/main) is listed with its architecture (config.json's\n"
          "model_type), parameter count and size on disk; a model that would not open says why.",
          runModels};
}

}  // namespace attnlab::cli
