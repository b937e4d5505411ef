// export-hf: writes an opened Hugging Face model back in its own layout (engine/hf/hf_export.h).
#include <iostream>

#include "cli_error.h"
#include "command.h"
#include "hf/hf_export.h"
#include "hf/hf_finetune.h"
#include "opened_model.h"
#include "setup.h"

namespace attnlab::cli {
namespace {

int runExportHf(const Args& args) {
  const OpenedModel opened = openAnyModel(args);
  hf::HfModelInfo origin = opened.hfInfo;
  if (!opened.isHf() && !opened.checkpoint.config.task.tokenizer.empty()) {  // fine-tuned from a Hugging Face folder
    if (std::string why = hf::pretrainedOrigin(opened.checkpoint.config, origin); !why.empty()) throw CliError(args.text("model") + ": " + why);
  } else if (!opened.isHf()) {
    throw CliError(args.text("model") + " is a lab checkpoint of the lab's own model; export-hf writes models opened or fine-tuned from a Hugging Face folder");
  }
  const std::string out = args.required("out");
  if (std::string why = hf::exportHfModel(opened.model(), origin, out); !why.empty()) throw CliError(out + ": " + why);
  std::cout << "wrote " << out << ": " << origin.model_type << ", " << origin.parameters << " parameters (F32)" << std::endl;
  return 0;
}

}  // namespace

Command exportHfCommand() {
  return {"export-hf",
          "--model DIR --out DIR",
          "write a Hugging Face model, opened or fine-tuned (its checkpoint), back in its folder's layout (F32)",
          {modelFlag(), {"out", "DIR", "folder to write"}},
          "The loader's conversions are inverted: GPT-2's Conv1D transposes and fused c_attn, GPT-NeoX's\n"
          "per-head query_key_value, and the rotary row permutation of q/k (rotate-half layout). The source folder's\n"
          "config.json and tokenizer files are copied beside. A checkpoint from 'train --model HFDIR' exports in HFDIR's layout.",
          runExportHf};
}

}  // namespace attnlab::cli
