// Parity of the PyTorch export (resources/attnlab_torch) with the engine. For every attention
// variant x positional encoding x gate option the engine registers (and, per variant, every
// projection sharing, grouped KV heads, every score precision, the variants' own settings, the block
// parts of pretrained models (model/block_parts.h) and circuit learning rates), this
// writes a small randomised model as a lab checkpoint folder plus the engine's logits, loss and
// gradients of one training step on a fixed batch (reference.safetensors). Then
// tests/export/parity_check.py (Debian's /usr/bin/python3 with python3-torch, installed by
// scripts/install_torch.sh when missing) loads each folder with attnlab_torch and checks logits to
// 1e-4 and gradients to 1e-3 relative. Gradients are compared directly, tensor by tensor, rather
// than through parameters after a step, because an Adam step's size hides its gradient's value
// (it is lr * sign(g) at step 1); the optimiser itself is checked by the "optimizer" case, which
// also dumps the parameters after the engine's clipping and AdamW step and its learning-rate schedule.
#include <QtTest>

#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_support.h"
#include "model_support.h"
#include "attention/attention.h"
#include "attention/precision.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "io/fixed_angle_table.h"
#include "io/torch_members.h"
#include "model/gates.h"
#include "model/projection_sharing.h"
#include "positional/positional.h"
#include "hf/hf_model.h"
#include "model/block_parts.h"
#include "tiny_hf_folder.h"
#include "train/circuit_lr.h"
#include "train/optimizer.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {

constexpr int kB = 2, kT = 12, kVocab = 9;

struct Case {
  std::string name;
  ModelConfig model;
  bool expectRefusal = false;  // the export cannot express it: attnlab_torch must refuse in one line
  std::function<void(TrainConfig&)> train = {};  // training settings the case changes (circuit learning rates)
  std::shared_ptr<Model> imported = {};  // a model opened from a Hugging Face folder (engine/hf), with its own weights
};

// The names a comma-separated catalogue constant lists (kNormNames, kMlpNames).
std::vector<std::string> listed(const std::string& names) {
  std::vector<std::string> out;
  for (const QString& name : QString::fromStdString(names).split(',', Qt::SkipEmptyParts)) out.push_back(name.trimmed().toStdString());
  return out;
}

// The block parts of pretrained models (model/block_parts.h), each on its own and in the three
// combinations the imported architectures use.
std::vector<std::pair<std::string, std::function<void(ModelConfig&)>>> blockOptions() {
  std::vector<std::pair<std::string, std::function<void(ModelConfig&)>>> options;
  for (const std::string& norm : listed(kNormNames))
    options.push_back({"norm_" + norm, [norm](ModelConfig& c) { c.norm = norm, c.norm_eps = 1e-6; }});
  for (const std::string& mlp : listed(kMlpNames)) options.push_back({"mlp_" + mlp, [mlp](ModelConfig& c) { c.mlp = mlp; }});
  options.push_back({"no_mlp_bias", [](ModelConfig& c) { c.mlp_bias = false; }});
  options.push_back({"qkv_bias", [](ModelConfig& c) { c.qkv_bias = true; }});
  options.push_back({"out_bias", [](ModelConfig& c) { c.out_bias = true; }});
  options.push_back({"parallel_residual", [](ModelConfig& c) { c.parallel_residual = true; }});
  options.push_back({"llama_blocks", [](ModelConfig& c) { c.norm = "rmsnorm", c.mlp = "swiglu", c.mlp_bias = false, c.n_kv_heads = 2; }});
  options.push_back({"neox_blocks", [](ModelConfig& c) {
                       c.mlp = "gelu_erf", c.qkv_bias = c.out_bias = c.parallel_residual = true, c.tied_embeddings = false;
                     }});
  options.push_back({"qwen2_blocks", [](ModelConfig& c) { c.norm = "rmsnorm", c.mlp = "swiglu", c.mlp_bias = false, c.qkv_bias = true; }});
  return options;
}

// A gate option: how it changes the config. Every gate the engine lists must have one here.
std::vector<std::pair<std::string, std::function<void(ModelConfig&)>>> gateOptions(QString& unknown) {
  std::vector<std::pair<std::string, std::function<void(ModelConfig&)>>> options = {{"nogate", [](ModelConfig&) {}}};
  for (const GateInfo& gate : gateCatalogue()) {
    if (gate.name == "retention_gate")
      options.push_back({"retention", [](ModelConfig& c) { c.retention_gate = true, c.retention_sparsity = 0.3; }});
    else if (gate.name == "output_gate") {
      options.push_back({"outgate_elementwise", [](ModelConfig& c) { c.output_gate = "elementwise"; }});
      options.push_back({"outgate_headwise", [](ModelConfig& c) { c.output_gate = "headwise"; }});
    } else if (gate.name == "presence")  // oattention's gate; a setting other variants ignore
      options.push_back({"presence_tau", [](ModelConfig& c) { c.attention_settings["presence_tau"] = 0.7; }});
    else if (gate.name == "value_gate")
      options.push_back({"valuegate", [](ModelConfig& c) { c.value_gate = true; }});
    else
      unknown += QString::fromStdString(gate.name) + " ";
  }
  return options;
}

// Settings of a variant or encoding away from their defaults, one case each.
std::vector<std::pair<std::string, Settings>> settingCases(const std::vector<SettingSpec>& specs) {
  std::vector<std::pair<std::string, Settings>> out;
  for (const SettingSpec& s : specs) {
    if (s.key == "presence_tau") continue;  // a gate option above
    double value = s.defaultValue == s.max ? s.min : s.integer ? std::min(s.max, s.defaultValue + 1) : s.defaultValue * 0.6;
    if (s.key == "window") value = 5;  // shorter than the sequence, so the window matters
    if (s.key == "theta") value = 500;
    if (s.key == "rotary_fraction") value = 0.5;
    if (s.key == "ntk_scale") value = 4;
    if (s.key == "temperature") value = 1.7;
    if (s.key == "momentum_gamma") value = 0.9;
    if (s.key == "linear_scale") value = 4;
    if (s.key == "llama3_original_context") value = 1024;
    Settings settings{{s.key, value}};
    if (s.key.rfind("llama3_", 0) == 0 && s.key != "llama3_factor") settings["llama3_factor"] = 8;  // the others act only with it
    if (s.key == "llama3_factor") value = 8, settings[s.key] = 8;
    if (s.key == "span_rotary_only") settings["rotary_fraction"] = 0.5;  // acts only on a partial rotation
    out.push_back({s.key, settings});
  }
  return out;
}

std::vector<Case> allCases(QString& unknownGates) {
  std::vector<Case> cases;
  const auto gates = gateOptions(unknownGates);
  for (const auto& variant : AttentionRegistry::instance().entries())
    for (const auto& positional : PositionalRegistry::instance().entries())
      for (const auto& [gateName, apply] : gates) {
        Case c{variant.name + "-" + positional.name + "-" + gateName, testing::smallConfig(variant.name, positional.name, kVocab, kT)};
        apply(c.model);
        cases.push_back(c);
      }
  for (const auto& variant : AttentionRegistry::instance().entries()) {
    const ModelConfig base = testing::smallConfig(variant.name, "rope", kVocab, kT);
    auto add = [&](const std::string& what, const std::function<void(ModelConfig&)>& change) {
      Case c{variant.name + "-" + what, base};
      change(c.model);
      cases.push_back(c);
    };
    for (const auto& sharing : projectionSharingCatalogue()) {
      // latent KV refuses rotary encodings (model/projection_sharing.h): ALiBi in their place
      const std::string positional = sharing.name == "latent" ? "alibi" : "rope";
      add("share_" + sharing.name, [&](ModelConfig& m) { m.projection_sharing = sharing.name, m.positional = positional; });
      add("share_" + sharing.name + "_gqa2", [&](ModelConfig& m) {
        m.projection_sharing = sharing.name, m.positional = positional, m.n_kv_heads = 2;
      });
    }
    add("share_latent_bias_value_gate", [](ModelConfig& m) {
      m.projection_sharing = "latent", m.positional = "learned", m.kv_latent_dim = 3, m.qkv_bias = true, m.value_gate = true;
    });
    for (const auto& precision : scorePrecisionCatalogue())
      for (const char* positional : {"rope", "alibi"})
        add(std::string("precision_") + precision.name + "_" + positional, [&](ModelConfig& m) {
          m.score_precision = precision.name, m.positional = positional, m.retention_gate = true;
        });
    for (const auto& [key, settings] : settingCases(AttentionRegistry::instance().create(variant.name)->settingSpecs()))
      add("setting_" + key, [settings = settings](ModelConfig& m) { m.attention_settings = settings; });
    add("attention_only_untied", [](ModelConfig& m) { m.attention_only = true, m.tied_embeddings = false; });
    for (const auto& [what, change] : blockOptions())
      if (variant.name == "softmax" || what.find("_blocks") != std::string::npos) add(what, change);
    add("mixed_layers", [&](ModelConfig& m) { m.attention = {variant.name, "softmax"}; });
  }
  for (const auto& positional : PositionalRegistry::instance().entries())
    for (const auto& [key, settings] : settingCases(PositionalRegistry::instance().create(positional.name)->settingSpecs())) {
      Case c{"softmax-" + positional.name + "-setting_" + key, testing::smallConfig("softmax", positional.name, kVocab, kT)};
      c.model.positional_settings = settings;
      cases.push_back(c);
    }
  // accumulated_rotation's fixed per-token table (omega_mode 1, carried as omega_table.safetensors)
  // with values rotated and a partial rotation, under grouped KV heads
  Case fixedTable{"softmax-accumulated_rotation-omega_table_rotate_values_gqa", testing::smallConfig("softmax", "accumulated_rotation", kVocab, kT)};
  fixedTable.model.positional_settings = {{"omega_mode", 1}, {"rotate_values", 1}, {"rotary_fraction", 0.5}};
  fixedTable.model.n_kv_heads = 1;
  cases.push_back(fixedTable);
  for (const auto& [what, change] : blockOptions()) {  // the block parts with every positional encoding
    for (const auto& positional : PositionalRegistry::instance().entries()) {
      if (what.find("_blocks") == std::string::npos || positional.name == "rope") continue;  // rope: above
      Case c{"softmax-" + positional.name + "-" + what, testing::smallConfig("softmax", positional.name, kVocab, kT)};
      change(c.model);
      cases.push_back(c);
    }
  }
  // Circuit learning rates (train/circuit_lr.h): the optimizer case again with W_q, W_k and W_v, W_o of layer 1 at their own rates.
  Case circuit{"softmax-learned-circuit_lr", testing::smallConfig("softmax", "learned", kVocab, kT)};
  circuit.train = [](TrainConfig& t) { t.qk_lr_ratio = 3, t.ov_lr_ratio = 0.25, t.lr_ratio_layers = "1"; };
  cases.push_back(circuit);
  Case latentCircuit{"softmax-learned-latent_circuit_lr", testing::smallConfig("softmax", "learned", kVocab, kT)};
  latentCircuit.model.projection_sharing = "latent";  // W_UK steps as QK, W_UV as OV, W_DKV at the base rate
  latentCircuit.train = circuit.train;
  cases.push_back(latentCircuit);
  // Cross-layer KV (model/cross_layer_kv.h): readers take the source's rotated, gated k, v
  for (const auto& [name, change] : std::vector<std::pair<std::string, std::function<void(ModelConfig&)>>>{
           {"softmax-rope-kv_share2", [](ModelConfig& m) { m.kv_share_group = 2; }},
           {"softmax-rope-kv_share3_of_4_gqa_value_gate_bias",
            [](ModelConfig& m) { m.n_layers = 4, m.kv_share_group = 3, m.n_kv_heads = 2, m.value_gate = true, m.qkv_bias = true; }},
           {"sigmoid-alibi-kv_share2_q_k=v", [](ModelConfig& m) { m.attention = {"sigmoid"}, m.positional = "alibi", m.kv_share_group = 2, m.projection_sharing = "q_k=v"; }},
           {"softmax-accumulated_rotation-kv_share2_rotate_values",
            [](ModelConfig& m) { m.positional = "accumulated_rotation", m.positional_settings = {{"omega_mode", 1}, {"rotate_values", 1}}, m.kv_share_group = 2; }}}) {
    Case shared{name, testing::smallConfig("softmax", "rope", kVocab, kT)};
    change(shared.model);
    cases.push_back(shared);
  }
  return cases;
}

// A tensor of the reference file, from raw floats.
void addTensor(ParamStore& store, const std::string& name, std::vector<int> shape, const float* data) {
  Param& p = store.add(name, std::move(shape));
  std::memcpy(p.value.data(), data, sizeof(float) * p.value.size());
}

bool writeText(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  return static_cast<bool>(f);
}

// Writes <dir>/config.json, model.safetensors and reference.safetensors for one case.
QString writeCase(const std::string& dir, const Case& c, bool optimizerStep) {
  QDir().mkpath(QString::fromStdString(dir));
  std::shared_ptr<Model> built = c.imported;
  if (!built) {
    built = std::make_shared<Model>(c.model, 3);
    testing::randomiseParams(*built, 17, 0.4f);
  }
  Model& model = *built;
  ExperimentConfig e;
  e.name = c.name;
  e.model = c.model;
  e.train.grad_clip = 0.5;  // small enough that the optimizer case clips
  e.train.weight_decay = 0.1;
  if (c.train) c.train(e.train);
  if (!writeText(dir + "/config.json", configToJson(e))) return "cannot write config.json";
  if (std::string why = writeSafetensors(dir + "/model.safetensors", model.params()); !why.empty()) return QString::fromStdString(why);
  if (std::string why = writeFixedAngleTable(dir, model); !why.empty()) return QString::fromStdString(why);

  Rng rng(5);
  std::vector<int> tokens(kB * kT), targets(kB * kT);
  for (int i = 0; i < kB * kT; ++i) {
    tokens[i] = rng.uniformInt(0, kVocab - 1);
    targets[i] = i % 5 == 2 ? -1 : rng.uniformInt(0, kVocab - 1);  // some positions carry no loss
  }
  auto ws = makeWorkspace();
  model.params().zeroGrad();
  const float loss = static_cast<float>(model.forward(*ws, tokens.data(), targets.data(), kB, kT));
  model.backward(*ws);

  ParamStore ref;
  std::vector<float> tokenValues(tokens.begin(), tokens.end()), targetValues(targets.begin(), targets.end());
  addTensor(ref, "tokens", {kB, kT}, tokenValues.data());
  addTensor(ref, "targets", {kB, kT}, targetValues.data());
  addTensor(ref, "loss", {1}, &loss);
  addTensor(ref, "logits", {kB, kT, c.model.vocab}, workspaceLogits(*ws).data());
  for (const auto& p : model.params().all()) addTensor(ref, "grad/" + p->name, p->shape, p->grad.data());
  if (optimizerStep) {  // the engine's clipping and one AdamW step, then its schedule
    clipGradients(model.params(), e.train.grad_clip);
    AdamW adam(model.params(), e.train);
    const float lr = 0.01f;
    const std::vector<float> ratios = circuitLrRatios(model.params(), e.train, 0);
    adam.step(lr, &ratios);
    addTensor(ref, "lr", {1}, &lr);
    for (const auto& p : model.params().all()) addTensor(ref, "after/" + p->name, p->shape, p->value.data());
    ExperimentConfig schedule = e;
    schedule.model.vocab = 0;
    schedule.task.name = "induction";
    schedule.train.steps = 40, schedule.train.warmup = 7, schedule.train.min_lr_ratio = 0.2;
    Trainer trainer(schedule);
    std::vector<float> lrs;
    for (int s = 0; s < schedule.train.steps; ++s) lrs.push_back(static_cast<float>(trainer.learningRate(s)));
    addTensor(ref, "schedule", {schedule.train.steps}, lrs.data());
    if (!writeText(dir + "/schedule.json", configToJson(schedule))) return "cannot write schedule.json";
  }
  if (std::string why = writeSafetensors(dir + "/reference.safetensors", ref); !why.empty()) return QString::fromStdString(why);
  if (c.expectRefusal && !writeText(dir + "/expect_refusal", "")) return "cannot write expect_refusal";
  return {};
}

// resources/attnlab_torch/members.json: what the package builds, and what it refuses with a reason.
nlohmann::json torchMembers() {
  std::ifstream in(ATTNLAB_SOURCE_DIR "/resources/attnlab_torch/members.json");
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// The members (kind:name) the engine has, each of which the package must build or refuse with a reason.
std::vector<std::pair<std::string, std::string>> engineMembers() {
  std::vector<std::pair<std::string, std::string>> out;  // {kind, name}; settings as kind "<family>_setting", "member.key"
  for (const auto& e : AttentionRegistry::instance().entries()) {
    out.push_back({"attention", e.name});
    for (const SettingSpec& spec : e.make()->settingSpecs()) out.push_back({"attention_setting", e.name + "." + spec.key});
  }
  for (const auto& e : PositionalRegistry::instance().entries()) {
    out.push_back({"positional", e.name});
    for (const SettingSpec& spec : e.make()->settingSpecs()) out.push_back({"positional_setting", e.name + "." + spec.key});
  }
  for (const GateInfo& gate : gateCatalogue()) out.push_back({"gates", gate.name});
  for (const auto& sharing : projectionSharingCatalogue()) out.push_back({"projection_sharing", sharing.name});
  for (const auto& precision : scorePrecisionCatalogue()) out.push_back({"score_precision", precision.name});
  for (const std::string& gate : listed(kOutputGateNames)) out.push_back({"output_gate", gate});
  for (const std::string& norm : listed(kNormNames)) out.push_back({"norm", norm});
  for (const std::string& mlp : listed(kMlpNames)) out.push_back({"mlp", mlp});
  const nlohmann::json defaults = nlohmann::json::parse(configToJson(ExperimentConfig{}));
  for (const auto& [key, _] : defaults["model"].items()) out.push_back({"model_keys", key});
  for (const auto& [key, _] : defaults["train"].items()) out.push_back({"train_keys", key});
  return out;
}

// True when members.json lists `name` of `kind` as built.
bool built(const nlohmann::json& members, const std::string& kind, const std::string& name) {
  const auto dot = name.find('.');
  if (kind == "attention_setting" || kind == "positional_setting") {
    const nlohmann::json& family = members[kind == "attention_setting" ? "attention" : "positional"];
    const std::string member = name.substr(0, dot), key = name.substr(dot + 1);
    return family.contains(member) && std::find(family[member].begin(), family[member].end(), key) != family[member].end();
  }
  const nlohmann::json& list = members[kind];
  return list.is_object() ? list.contains(name) : std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace

class TestExportParity : public QObject {
  Q_OBJECT
 private slots:
  // Every member the engine registers is in the package's list, or refused there with a one-line reason.
  void everyEngineMemberIsBuiltOrRefused() {
    const nlohmann::json members = torchMembers();
    const std::map<std::string, std::string> singular = {{"gates", "gate"}, {"model_keys", "model_key"}, {"train_keys", "train_key"}};
    for (const auto& [kind, name] : engineMembers()) {
      if (built(members, kind, name)) continue;
      const std::string key = (singular.count(kind) ? singular.at(kind) : kind) + ":" + name;
      const auto reason = members["refused"].find(key);
      QVERIFY2(reason != members["refused"].end(),
               qPrintable(QString::fromStdString(key) + ": the engine has it; build it in attnlab_torch (and list it in members.json) "
                                                        "or list it under \"refused\" with its reason"));
      const std::string line = reason->get<std::string>();
      QVERIFY2(!line.empty() && line.find('\n') == std::string::npos, key.c_str());
    }
  }

  void torchMatchesEngineForEveryCombination() {
    const Run install = runProgram("bash", {ATTNLAB_SOURCE_DIR "/scripts/install_torch.sh"});
    QVERIFY2(install.exitCode == 0, ("the parity test needs Debian's python3-torch: " + install.err).constData());

    QString unknownGates;
    std::vector<Case> cases = allCases(unknownGates);
    // An imported architecture, opened as the lab opens it (GPT-2's Conv1D and fused c_attn
    // converted): its gradients too. Llama, Qwen2 and GPT-NeoX are their block cases above
    // (*_blocks); test_hf_reference checks each one's exported logits against its definition.
    QTemporaryDir hfDir;
    QCOMPARE(QString::fromStdString(tiny_hf::writeGpt2Folder(hfDir.path().toStdString(), 2, 2, 8, kT)), QString());
    Case gpt2{"hf-gpt2", {}};
    std::unique_ptr<Model> opened;
    hf::HfModelInfo info;
    QCOMPARE(QString::fromStdString(hf::openHfModel(hfDir.path().toStdString(), opened, info)), QString());
    gpt2.model = info.config;
    gpt2.imported = std::move(opened);
    cases.push_back(gpt2);
    QVERIFY2(unknownGates.isEmpty(), qPrintable("gates without a parity case (add them here and to attnlab_torch): " + unknownGates));
    // A case the exporter refuses (members.json) must be refused by the package too, in one line.
    const std::string members = torchMembers().dump();
    for (Case& c : cases) {
      ExperimentConfig e;
      e.model = c.model;
      if (c.train) c.train(e.train);
      c.expectRefusal = !torchExportRefusal(e, members).empty();
    }
    // In memory where the system has it: the engine flushes each file it writes (fsync), which on a
    // busy disk costs more than the whole comparison.
    QTemporaryDir tmp(QDir("/dev/shm").exists() ? "/dev/shm/attnlab-parity-XXXXXX" : QDir::tempPath() + "/attnlab-parity-XXXXXX");
    QVERIFY(tmp.isValid());
    QElapsedTimer clock;
    clock.start();
    for (size_t i = 0; i < cases.size(); ++i) {
      const std::string dir = tmp.path().toStdString() + "/" + cases[i].name;
      const bool optimizerStep = cases[i].name == "softmax-learned-nogate" || cases[i].train;
      const QString why = writeCase(dir, cases[i], optimizerStep);
      QVERIFY2(why.isEmpty(), qPrintable(QString::fromStdString(cases[i].name) + ": " + why));
    }
    qInfo("the engine wrote %zu cases in %.1f s", cases.size(), clock.restart() / 1000.0);
    const Run check = runProgram("/usr/bin/python3", {ATTNLAB_SOURCE_DIR "/tests/export/parity_check.py", tmp.path()});
    qInfo().noquote() << check.out.trimmed() << QString(" in %1 s").arg(clock.elapsed() / 1000.0, 0, 'f', 1);
    QVERIFY2(check.exitCode == 0, (check.out.right(3000) + check.err.right(3000)).constData());
    // every case was checked, none skipped
    QVERIFY2(check.out.contains(QString("checked %1 cases").arg(cases.size()).toUtf8()), check.out.right(300).constData());
  }
};

QTEST_GUILESS_MAIN(TestExportParity)
#include "test_export_parity.moc"
