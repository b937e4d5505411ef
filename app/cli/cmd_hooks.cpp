// hooks: the named hook points of a lab checkpoint or Hugging Face folder (model/hooks.h), the activations the causal
// analyses read and replace.
#include <iostream>

#include "cli_error.h"
#include "command.h"
#include "format.h"
#include "model/hooks.h"
#include "opened_model.h"

namespace attnlab::cli {
namespace {

int runHooks(const Args& args) {
  const OpenedModel opened = openAnyModel(args);
  const ModelConfig& config = opened.model().config();
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
          {{"model", "DIR", "a checkpoint folder written by 'attnlab-cli train' or the app, or a Hugging Face model folder"}, {"json", "", "print {format, model, hooks: [{name, shape}]}"}},
          "Names follow TransformerLens: blocks.L.resid_pre, blocks.L.attn.pattern, blocks.L.attn.head_out, ..., ln_f.out.",
          runHooks};
}

}  // namespace attnlab::cli
