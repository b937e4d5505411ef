// data: a task's (or a text's) training and validation sequences as flat token files with loss
// masks, the format the PyTorch export's train.py reads (resources/attnlab_torch/data.py). The
// sequences are drawn from the run's own generators, so they are the batches the lab trains and
// validates on, in order: sequence i of train.tokens is row i % batch of step i / batch + 1.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli_error.h"
#include "command.h"
#include "export_folder.h"
#include "format.h"
#include "hf/hf_model.h"
#include "core/files.h"
#include "io/config_json.h"
#include "setup.h"

namespace attnlab::cli {
namespace {

// --text FILE --tokenizer DIR: the text through a pretrained model's tokenizer (its folder, or an
// export's init/pretrained), ids padded to the model's embedding rows, sequences of 128 tokens
// unless --set task.seq_len says otherwise: the data an exported Hugging Face model trains on.
void usePretrainedTokenizer(const Args& args, ExperimentConfig& config) {
  if (!args.has("text")) throw CliError("--tokenizer DIR goes with --text FILE (the corpus it tokenizes)");
  config.task.tokenizer = args.text("tokenizer");
  hf::HfModelInfo info;
  if (hf::readHfConfig(config.task.tokenizer, info).empty()) config.task.settings["vocab_rows"] = info.config.vocab;
  config.task.seq_len = 128;
}

// --task / --text start from the default experiment; --preset, --config and --model from theirs.
ExperimentConfig dataExperiment(const Args& args) {
  const int sources = args.has("task") + args.has("text") + args.has("preset") + args.has("config") + args.has("model");
  if (sources != 1) throw CliError("give exactly one of --task NAME, --text FILE, --preset NAME, --config FILE or --model DIR");
  if (args.has("preset") || args.has("config")) return experimentFromFlags(args);
  ExperimentConfig config;
  if (args.has("model")) config = openModel(args).config;
  if (args.has("task")) config.task.name = args.text("task");
  if (args.has("text")) config.task.name = "text", config.task.text_path = args.text("text");
  if (args.has("tokenizer")) usePretrainedTokenizer(args, config);
  for (const std::string& assignment : args.all("set"))
    if (std::string why = applyOverride(config, assignment); !why.empty()) throw CliError("--set " + why);
  config.model.context = std::max(config.model.context, config.task.seq_len);  // sequences as long as --set task.seq_len asks
  config.train.seed = static_cast<uint64_t>(args.integer("seed", static_cast<long long>(config.train.seed), 0, 1LL << 62));
  if (std::string why = validate(config); !why.empty()) throw CliError("invalid configuration: " + why);
  return config;
}

std::string int32Bytes(const std::vector<int>& values) {
  static_assert(sizeof(int) == 4, "token files hold int32");
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

struct Split {
  std::vector<int> tokens, targets;
  int sequences = 0;
};

Split sampleSplit(const Task& task, int batches, int batch, int T, attnlab::Split split, Rng rng) {
  Split out;
  for (int n = 0; n < batches; ++n) {
    Batch b;
    try {
      b = task.sample(batch, T, split, rng);
    } catch (const std::invalid_argument& e) {
      throw CliError(e.what());
    }
    out.tokens.insert(out.tokens.end(), b.inputs.begin(), b.inputs.end());
    out.targets.insert(out.targets.end(), b.targets.begin(), b.targets.end());
    out.sequences += b.B;
  }
  return out;
}

int runData(const Args& args) {
  const std::string out = args.required("out");
  const long long tokens = args.integer("tokens", 0, 1, 1LL << 40);
  if (!args.has("tokens")) throw CliError("--tokens N is required (training tokens to write)");
  const ExperimentConfig config = dataExperiment(args);
  const Trainer trainer(config);  // builds and checks the task; its sequence length is the lab's
  const int T = trainer.sequenceLength(), B = config.train.batch;
  const long long batches = (tokens + static_cast<long long>(B) * T - 1) / (static_cast<long long>(B) * T);
  if (batches * B * T > (1LL << 31)) throw CliError("--tokens " + std::to_string(tokens) + " is more than one file of int32 can index here");
  const Task& task = trainer.task();
  const Split train = sampleSplit(task, static_cast<int>(batches), B, T, attnlab::Split::Train, trainingDataRng(config.train.seed));
  const Split validation = sampleSplit(task, config.train.eval_batches, B, T, attnlab::Split::Validation,
                                       validationDataRng(config.train.seed));

  prepareOutputFolder(out, "data.json", "an attnlab data folder");
  namespace fs = std::filesystem;
  const auto write = [&](const std::string& name, const std::string& bytes) {
    if (std::string why = writeFileAtomic((fs::path(out) / name).string(), bytes); !why.empty()) throw CliError(why, 1);
  };
  write("train.tokens", int32Bytes(train.tokens));
  write("train.targets", int32Bytes(train.targets));
  write("validation.tokens", int32Bytes(validation.tokens));
  write("validation.targets", int32Bytes(validation.targets));
  Json labels = Json::array();
  for (int id = 0; id < task.vocabulary().size(); ++id) labels.push_back(task.vocabulary().token(id));
  const Json meta = {{"format", "attnlab-data-1"},
                     {"vocab", task.vocabulary().size()},
                     {"seq_len", T},
                     {"splits", {{"train", train.sequences}, {"validation", validation.sequences}}},
                     {"has_answers", task.hasAnswers()},
                     {"task", Json::parse(configToJson(config))["task"]},
                     {"seed", config.train.seed},
                     {"batch", B},
                     {"labels", labels}};
  write("data.json", meta.dump(2) + "\n");
  std::cout << "wrote " << out << ": " << train.sequences << " training sequences (" << train.sequences * static_cast<long long>(T)
            << " tokens, " << batches << " batches of " << B << ") and " << validation.sequences << " validation sequences of "
            << T << " tokens, task " << config.task.name << std::endl;
  return 0;
}

}  // namespace

Command dataCommand() {
  return {"data",
          "(--task NAME | --text FILE [--tokenizer DIR] | --preset NAME | --config FILE | --model DIR) --tokens N --out DIR [--set KEY=VALUE ...]",
          "write a task's or a text's sequences as token files with loss masks, for the PyTorch export's train.py",
          {{"task", "NAME", "a task (see 'attnlab-cli list') with the default experiment's settings"},
           {"text", "FILE", "a UTF-8 text, modelled character by character (the text task)"},
           {"tokenizer", "DIR", "with --text: tokenize it with this model folder's tokenizer (a Hugging Face folder, or an export's init/pretrained)"},
           {"preset", "NAME", "the task, seed and batch of a built-in preset"},
           {"config", "FILE", "the task, seed and batch of an experiment JSON file"},
           modelFlag(),
           {"set", "KEY=VALUE", "override one setting, e.g. task.settings.length=24 or train.seed=3 (repeatable)", true},
           {"seed", "S", "seed of the data (train.seed)"},
           {"tokens", "N", "training tokens to write (rounded up to whole batches)"},
           {"out", "DIR", "folder to write"}},
          "Writes data.json (vocab, seq_len, splits, has_answers, labels), train.tokens and train.targets\n"
          "(int32, N x seq_len; a target of -1 takes no loss), and validation.tokens/.targets: the lab's\n"
          "train.eval_batches validation batches. The sequences are the lab's own batches for the seed, in order.",
          runData};
}

}  // namespace attnlab::cli
