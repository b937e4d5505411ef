// attnlab-cli export refuses, before writing anything and in one line, an experiment holding a
// member attnlab_torch does not build, by the package's own list (resources/attnlab_torch/members.json,
// engine/io/torch_members.h): here against the real list, and against a copy that takes members out
// (with and without a reason under "refused"), as a lab member the package lacks would be.
// tests/test_export_parity.cpp checks that every member the engine registers is in the list or refused.
#include <QtTest>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/torch_members.h"
#include "experiment/experiment_config.h"

using namespace attnlab;
using Json = nlohmann::json;

namespace {

Json realMembers() {
  std::ifstream in(ATTNLAB_SOURCE_DIR "/resources/attnlab_torch/members.json");
  std::stringstream s;
  s << in.rdbuf();
  return Json::parse(s.str());
}

QString refusal(const ExperimentConfig& config, const Json& members) {
  return QString::fromStdString(torchExportRefusal(config, members.dump()));
}

void verifyLine(const QString& got, const QString& expected) {
  QVERIFY2(!got.contains('\n'), qPrintable(got));
  QVERIFY2(got.startsWith(expected), qPrintable(got + "\n  expected to start with: " + expected));
}

}  // namespace

class TestTorchMembers : public QObject {
  Q_OBJECT
 private slots:
  void theRealListAcceptsWhatThePackageBuilds() {
    ExperimentConfig config;
    QCOMPARE(refusal(config, realMembers()), QString());
    config.model.attention = {"deltanet", "multi_token", "softmax", "qk_norm"};
    config.model.n_layers = 4;
    config.model.attention_settings = {{"mta_query_width", 5}};
    config.model.positional = "accumulated_rotation";
    config.model.positional_settings = {{"omega_mode", 1}, {"rotate_values", 1}};
    config.model.norm = "rmsnorm", config.model.mlp = "swiglu", config.model.score_precision = "bf16";
    config.model.projection_sharing = "q=k_v", config.model.output_gate = "headwise";
    config.train.qk_lr_ratio = 2;
    QCOMPARE(refusal(config, realMembers()), QString());
  }

  void aMemberTheListLacksIsRefusedInOneLineNamingIt() {
    Json members = realMembers();
    members["attention"].erase("deltanet");
    members["refused"]["attention:deltanet"] = "its delta-rule state is not built in PyTorch yet";
    ExperimentConfig config;
    config.model.attention = {"deltanet"};
    verifyLine(refusal(config, members),
               "the PyTorch export cannot express attention variant 'deltanet': its delta-rule state is not built in PyTorch yet");
    config.model.attention = {"softmax", "deltanet"};  // one layer of it is enough
    config.model.n_layers = 2;
    verifyLine(refusal(config, members), "the PyTorch export cannot express attention variant 'deltanet':");
    members["refused"].erase("attention:deltanet");  // no reason listed: what the package builds instead
    verifyLine(refusal(config, members), "the PyTorch export cannot express attention variant 'deltanet' (attnlab_torch builds ");

    config = ExperimentConfig{};
    config.model.positional = "rope";
    config.model.positional_settings = {{"llama3_factor", 8}};
    members = realMembers();
    members["positional"]["rope"].erase(std::find(members["positional"]["rope"].begin(), members["positional"]["rope"].end(), "llama3_factor"));
    verifyLine(refusal(config, members), "the PyTorch export cannot express positional setting 'rope.llama3_factor' (attnlab_torch builds rope's ");
    config.model.positional_settings.clear();
    QCOMPARE(refusal(config, members), QString());  // the setting at its default is not in the config

    members = realMembers();
    members["norm"] = Json::array({"layernorm"});
    members["refused"]["norm:rmsnorm"] = "no RMSNorm here";
    config.model.norm = "rmsnorm";
    verifyLine(refusal(config, members), "the PyTorch export cannot express model.norm 'rmsnorm': no RMSNorm here");
  }

  void keysTheListLacksAreRefused() {
    Json members = realMembers();
    members["model_keys"].erase(std::find(members["model_keys"].begin(), members["model_keys"].end(), "parallel_residual"));
    verifyLine(refusal(ExperimentConfig{}, members), "the PyTorch export cannot express model key 'parallel_residual'");
    members = realMembers();
    members["train_keys"].erase(std::find(members["train_keys"].begin(), members["train_keys"].end(), "qk_lr_ratio"));
    ExperimentConfig config;
    QCOMPARE(refusal(config, members), QString());  // a training key it does not read is harmless at its default
    config.train.qk_lr_ratio = 3;
    verifyLine(refusal(config, members), "the PyTorch export cannot express training key 'qk_lr_ratio'");
  }

  void anUnreadableListIsOneLine() {
    const QString why = QString::fromStdString(torchExportRefusal(ExperimentConfig{}, "{not json"));
    verifyLine(why, "the PyTorch export's members.json is not readable");
  }
};

QTEST_GUILESS_MAIN(TestTorchMembers)
#include "test_torch_members.moc"
