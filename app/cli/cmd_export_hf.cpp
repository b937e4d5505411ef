// export-hf: writes an opened Hugging Face model back in its own layout (engine/hf/hf_export.h).
#include <iostream>

#include "cli_error.h"
#include "command.h"
#include "hf/hf_export.h"
#include "opened_model.h"
#include "setup.h"

namespace attnlab::cli {
namespace {

int runExportHf(const Args& args) {
  const OpenedModel opened = openAnyModel(args);
  if (!opened.isHf()) throw CliError(args.text("model") + " is a lab checkpoint; export-hf writes models opened from a Hugging Face folder");
  const std::string out = args.required("out");
  if (std::string why = hf::exportHfModel(opened.model(), opened.hfInfo, out); !why.empty()) throw CliError(out + ": " + why);
  std::cout << "wrote " << out << ": " << opened.hfInfo.model_type << ", " << opened.hfInfo.parameters << " parameters (F32)" << std::endl;
  return 0;
}

}  // namespace

Command exportHfCommand() {
  return {"export-hf",
          "--model DIR --out DIR",
          "write a model opened from a Hugging Face folder back in that layout (config.json, model.safetensors F32)",
          {modelFlag(), {"out", "DIR", "folder to write"}},
          "The loader's conversions are inverted: GPT-2's Conv1D transposes and fused c_attn, GPT-NeoX's\n"
          "per-head query_key_value, and the rotary row permutation of q/k (rotate-half layout).",
          runExportHf};
}

}  // namespace attnlab::cli
