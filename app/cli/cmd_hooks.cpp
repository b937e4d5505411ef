// hooks: the named hook points of a saved model (model/hooks.h), the activations the causal
// analyses read and replace.
#include <iostream>

#include "cli_error.h"
#include "command.h"
#include "format.h"
#include "model/hooks.h"
#include "setup.h"

namespace attnlab::cli {
namespace {

int runHooks(const Args& args) {
  LoadedCheckpoint loaded = openModel(args);
  const ModelConfig& config = loaded.config.model;
  Json rows = Json::array();
  for (const std::string& name : hookNames(config)) {
    HookSite site;
    int layer;
    parseHookName(name, config, site, layer);
    if (args.has("json")) rows.push_back({{"name", name}, {"shape", hookDescription(site)}});
    else std::cout << name << "  " << hookDescription(site) << "\n";
  }
  if (args.has("json")) std::cout << Json{{"format", "attnlab-hooks-1"}, {"model", args.text("model")}, {"hooks", rows}}.dump() << std::endl;
  return 0;
}

}  // namespace

Command hooksCommand() {
  return {"hooks",
          "--model DIR [--json]",
          "list the model's named hook points (activations the interpret analyses read and replace)",
          {modelFlag(), {"json", "", "print {format, model, hooks: [{name, shape}]}"}},
          "Names follow TransformerLens: blocks.L.resid_pre, blocks.L.attn.pattern, blocks.L.attn.head_out, ..., ln_f.out.",
          runHooks};
}

}  // namespace attnlab::cli
