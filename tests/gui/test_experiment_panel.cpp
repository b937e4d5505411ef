// The experiment panel: every registry member is offered with its formula as tooltip, the settings
// shown follow the chosen member, invalid input is refused with the engine's reason and nothing is
// applied, valid edits are applied whole, and every preset reads back unchanged through the editors.
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "attention/attention.h"
#include "attention/precision.h"
#include "data/task.h"
#include "experiment_panel.h"
#include "io/config_json.h"
#include "model/gates.h"
#include "model/projection_sharing.h"
#include "number_field.h"
#include "positional/positional.h"
#include "train/memory_estimate.h"
#include "train/step_rate.h"
#include "training_rate.h"

using namespace attnlab;

namespace {

ExperimentConfig preset(const std::string& name) {
  ExperimentConfig c;
  if (const std::string why = loadPreset(name, c); !why.empty()) qFatal("%s", why.c_str());
  return c;
}

QString jsonWithoutVocab(ExperimentConfig c) {
  c.model.vocab = 0;
  return QString::fromStdString(configToJson(c));
}

// name -> tooltip of every item of a picker.
QMap<QString, QString> itemsOf(const QComboBox* box) {
  QMap<QString, QString> items;
  for (int i = 0; i < box->count(); ++i) items[box->itemData(i).toString()] = box->itemData(i, Qt::ToolTipRole).toString();
  return items;
}

template <class Entries>
void expectExactly(const QComboBox* box, const Entries& entries) {
  QVERIFY(box);
  const QMap<QString, QString> items = itemsOf(box);
  QCOMPARE(items.size(), int(entries.size()));
  for (const auto& e : entries) {
    const QString name = QString::fromStdString(e.name);
    QVERIFY2(items.contains(name), qPrintable(box->objectName() + ": " + name + " missing"));
    QCOMPARE(items[name], QString::fromStdString(e.summary));
  }
}

void type(NumberField* field, const QString& text) {
  QVERIFY(field);
  field->setText(text);
}

}  // namespace

class ExperimentPanelTest : public QObject {
  Q_OBJECT
 private slots:
  void everyRegistryMemberIsListedWithItsFormula() {
    ExperimentPanel panel;
    panel.setAppliedConfig(preset("default"));
    expectExactly(panel.picker("model.attention"), AttentionRegistry::instance().entries());
    expectExactly(panel.picker("model.positional"), PositionalRegistry::instance().entries());
    expectExactly(panel.picker("task.name"), TaskRegistry::instance().entries());
    expectExactly(panel.picker("model.projection_sharing"), projectionSharingCatalogue());
    expectExactly(panel.picker("model.score_precision"), scorePrecisionCatalogue());
    QStringList gates;
    for (int i = 0; i < panel.picker("model.output_gate")->count(); ++i) gates << panel.picker("model.output_gate")->itemText(i);
    QCOMPARE(gates, QString::fromLatin1(kOutputGateNames).split(", "));
    // The closed picker shows the chosen member's formula too.
    QComboBox* positional = panel.picker("model.positional");
    positional->setCurrentIndex(positional->findData("alibi"));
    QCOMPARE(positional->toolTip(), QString::fromStdString(PositionalRegistry::instance().find("alibi")->summary));

    // Per layer: one picker per layer, each listing every variant.
    panel.checkBox("model.attention.per_layer")->setChecked(true);
    for (int layer = 0; layer < 4; ++layer)
      expectExactly(panel.picker(QStringLiteral("model.attention.%1").arg(layer)), AttentionRegistry::instance().entries());
    QVERIFY(!panel.picker("model.attention.4"));
    QVERIFY(!panel.picker("model.attention"));
  }

  void settingsFollowTheChosenMember() {
    ExperimentPanel panel;
    panel.setAppliedConfig(preset("default"));
    for (const auto& e : AttentionRegistry::instance().entries()) {
      QComboBox* box = panel.picker("model.attention");
      box->setCurrentIndex(box->findData(QString::fromStdString(e.name)));
      for (const SettingSpec& spec : e.make()->settingSpecs()) {
        NumberField* f = panel.field(QString::fromStdString("model.attention_settings." + spec.key));
        QVERIFY2(f, (e.name + ": " + spec.key).c_str());
        QCOMPARE(f->placeholderText(), NumberField::format(spec.defaultValue));  // empty = the default, shown
        QVERIFY(f->toolTip().contains(QString::fromStdString(spec.help)));
      }
    }
    for (const auto& e : PositionalRegistry::instance().entries()) {
      QComboBox* box = panel.picker("model.positional");
      box->setCurrentIndex(box->findData(QString::fromStdString(e.name)));
      for (const SettingSpec& spec : e.make()->settingSpecs())
        QVERIFY2(panel.field(QString::fromStdString("model.positional_settings." + spec.key)), (e.name + ": " + spec.key).c_str());
    }
    for (const auto& e : TaskRegistry::instance().entries()) {
      QComboBox* box = panel.picker("task.name");
      box->setCurrentIndex(box->findData(QString::fromStdString(e.name)));
      for (const SettingSpec& spec : e.make()->settingSpecs())
        QVERIFY2(panel.field(QString::fromStdString("task.settings." + spec.key)), (e.name + ": " + spec.key).c_str());
    }
    // A setting of a member no longer chosen is gone.
    QComboBox* positional = panel.picker("model.positional");
    positional->setCurrentIndex(positional->findData("rope"));
    QVERIFY(panel.field("model.positional_settings.theta"));
    positional->setCurrentIndex(positional->findData("learned"));
    QVERIFY(!panel.field("model.positional_settings.theta"));
  }

  void headsThatDoNotDivideTheWidthAreRefused() {
    ExperimentPanel panel;
    const ExperimentConfig applied = preset("default");  // d_model 128
    panel.setAppliedConfig(applied);
    QSignalSpy applyRequested(&panel, &ExperimentPanel::applyRequested);
    type(panel.field("model.n_heads"), "3");
    QVERIFY(!panel.apply());
    QCOMPARE(applyRequested.count(), 0);
    QVERIFY2(panel.problem().contains("model.n_heads (3) must divide model.d_model (128)"), qPrintable(panel.problem()));
    QVERIFY(panel.field("model.n_heads")->property("invalid").toBool());
    QVERIFY(panel.field("model.n_heads")->toolTip().contains("must divide"));
    QCOMPARE(panel.field("model.n_heads")->text(), QString("3"));  // kept as typed, not clamped
    QVERIFY(!panel.findChild<QWidget*>("apply")->isEnabled());
    QCOMPARE(jsonWithoutVocab(panel.appliedConfig()), jsonWithoutVocab(applied));

    type(panel.field("model.n_heads"), "8");
    QVERIFY(panel.apply());
    QCOMPARE(applyRequested.count(), 1);
    const auto config = applyRequested.first().first().value<ExperimentConfig>();
    QCOMPARE(config.model.n_heads, 8);
    QCOMPARE(panel.problem(), QString());
    QVERIFY(!panel.field("model.n_heads")->property("invalid").toBool());
  }

  void otherInvalidInputIsRefusedWithItsReason() {
    struct Case {
      const char* key;
      const char* text;
      const char* reason;
    };
    const Case cases[] = {
        {"model.d_model", "abc", "model.d_model must be a whole number"},
        {"model.d_model", "", "model.d_model needs a value"},
        {"train.lr", "0", "train.lr must be in (0, 10)"},
        {"train.lr", "fast", "train.lr must be a number"},
        {"model.n_kv_heads", "3", "model.n_kv_heads (3) must divide model.n_heads (4)"},
        {"train.batch", "-2", "train.batch must be positive"},
        {"train.seed", "-1", "train.seed must be a whole number"},
        {"model.retention_sparsity", "0.5", "needs model.retention_gate"},
        {"model.context", "100000", "larger than this lab supports"},
    };
    for (const Case& c : cases) {
      ExperimentPanel panel;
      panel.setAppliedConfig(preset("default"));
      QSignalSpy applyRequested(&panel, &ExperimentPanel::applyRequested);
      type(panel.field(c.key), c.text);
      QVERIFY2(!panel.apply(), c.key);
      QCOMPARE(applyRequested.count(), 0);
      QVERIFY2(panel.problem().contains(c.reason), qPrintable(QString("%1=%2: %3").arg(c.key, c.text, panel.problem())));
      QVERIFY2(!panel.problem().contains('\n'), qPrintable(panel.problem()));
    }

    // A member's own setting outside its declared range.
    ExperimentPanel panel;
    panel.setAppliedConfig(preset("induction"));  // rope
    type(panel.field("model.positional_settings.rotary_fraction"), "1.5");
    QVERIFY(!panel.apply());
    QVERIFY2(panel.problem().contains("rope: rotary_fraction = 1.5 is outside"), qPrintable(panel.problem()));
    QVERIFY(panel.field("model.positional_settings.rotary_fraction")->property("invalid").toBool());
  }

  void perLayerVariantsAndTheirSettings() {
    ExperimentPanel panel;
    panel.setAppliedConfig(preset("induction"));  // 2 layers
    panel.checkBox("model.attention.per_layer")->setChecked(true);
    type(panel.field("model.n_layers"), "3");
    emit panel.field("model.n_layers")->textEdited("3");
    QVERIFY(panel.picker("model.attention.2"));
    QComboBox* middle = panel.picker("model.attention.1");
    middle->setCurrentIndex(middle->findData("window"));
    type(panel.field("model.attention_settings.window"), "8");
    ExperimentConfig c;
    QCOMPARE(panel.readConfig(c), QString());
    QCOMPARE(c.model.attention, (std::vector<std::string>{"softmax", "window", "softmax"}));
    QCOMPARE(c.model.attention_settings.at("window"), 8.0);
    QVERIFY(panel.apply());
  }

  void theTextTaskReadsTheChosenFile() {
    QTemporaryDir dir;
    const QString path = dir.filePath("corpus.txt");
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    for (int i = 0; i < 200; ++i) file.write("the cat sat on the mat. ");
    file.close();

    ExperimentPanel panel;
    panel.setAppliedConfig(preset("default"));
    panel.setTextFile(path);
    QCOMPARE(panel.picker("task.name")->currentData().toString(), QString("text"));
    ExperimentConfig c;
    QCOMPARE(panel.readConfig(c), QString());
    QCOMPARE(c.task.name, std::string("text"));
    QCOMPARE(QString::fromStdString(c.task.text_path), path);

    panel.setTextFile(dir.filePath("missing.txt"));
    QVERIFY(!panel.apply());
    QVERIFY2(panel.problem().contains("missing.txt"), qPrintable(panel.problem()));
  }

  void theMemoryEstimateIsShown() {
    ExperimentPanel panel;
    const ExperimentConfig config = preset("default");
    panel.setAppliedConfig(config);
    MemoryEstimate e;
    QVERIFY(estimateMemory(config, e).empty());
    QVERIFY2(panel.memoryText().contains("Memory for training"), qPrintable(panel.memoryText()));
    QVERIFY2(panel.memoryText().contains(QLocale(QLocale::English).toString(qulonglong(e.parameters))), qPrintable(panel.memoryText()));
    QVERIFY2(panel.memoryText().contains(QString("batch %1").arg(config.train.batch)), qPrintable(panel.memoryText()));

    // Twice the batch: more activation memory, shown as soon as it is checked.
    type(panel.field("train.batch"), QString::number(config.train.batch * 2));
    ExperimentConfig doubled;
    QCOMPARE(panel.readConfig(doubled), QString());
    QVERIFY2(panel.memoryText().contains(QString("batch %1").arg(config.train.batch * 2)), qPrintable(panel.memoryText()));
  }

  // Before Apply the footer estimates the time per step from the experiment's FLOPs and this
  // machine's measured speed: "unknown" until the speed is known, then a labelled estimate that
  // doubles with the batch (the FLOPs per step are per token times batch times length).
  void theTimePerStepIsEstimated() {
    TrainingRate::shared()->set(0);  // as before the background measurement is done
    ExperimentPanel panel;
    const ExperimentConfig config = preset("default");
    panel.setAppliedConfig(config);
    QVERIFY2(panel.timeText().contains("unknown"), qPrintable(panel.timeText()));
    QCOMPARE(panel.secondsPerStep(), 0.0);

    TrainingRate::shared()->set(1e9);
    QVERIFY2(panel.timeText().contains("Time per step: about") && panel.timeText().contains("estimate"), qPrintable(panel.timeText()));
    MemoryEstimate e;
    QVERIFY(estimateMemory(config, e).empty());
    QCOMPARE(panel.secondsPerStep(), trainingFlopsPerStep(config, e) / 1e9);
    const double single = panel.secondsPerStep();
    type(panel.field("train.batch"), QString::number(config.train.batch * 2));
    ExperimentConfig doubled;
    QCOMPARE(panel.readConfig(doubled), QString());
    QVERIFY2(std::abs(panel.secondsPerStep() / single - 2) < 0.05, qPrintable(QString::number(panel.secondsPerStep() / single)));
    type(panel.field("model.d_model"), "97");  // not a multiple of the heads: no estimate
    QVERIFY(!panel.readConfig(doubled).isEmpty());
    QVERIFY2(panel.timeText().contains("fix the settings"), qPrintable(panel.timeText()));
  }

  // The rate the background measures: a few steps of a small model, in a CPU's range.
  void theMachinesSpeedIsMeasured() {
    const double rate = measureTrainingFlopsPerSecond(1, 0.1);
    qInfo("measured %.3g FLOP/s", rate);
    QVERIFY2(rate > 1e7 && rate < 1e12, qPrintable(QString::number(rate)));
  }

  // A batch a thousand times too large for the memory available: refused with the engine's line (the
  // one the Trainer would give), the figures still shown, and the applied experiment kept.
  void aBatchTooLargeForMemoryIsRefusedWithTheFigures() {
    ExperimentPanel panel;
    const ExperimentConfig applied = preset("default");
    panel.setAppliedConfig(applied);
    ExperimentConfig huge = applied;
    huge.train.batch = 100000000;
    MemoryEstimate e;
    const QString expected = QString::fromStdString(estimateMemory(huge, e));
    QVERIFY2(expected.startsWith("this experiment needs about"), qPrintable(expected));
    QSignalSpy applyRequested(&panel, &ExperimentPanel::applyRequested);
    type(panel.field("train.batch"), "100000000");
    QVERIFY(!panel.apply());
    QCOMPARE(applyRequested.count(), 0);
    QCOMPARE(panel.problem(), expected);
    QVERIFY2(panel.memoryText().contains("batch 100000000"), qPrintable(panel.memoryText()));
    QVERIFY(!panel.findChild<QWidget*>("apply")->isEnabled());
    QCOMPARE(jsonWithoutVocab(panel.appliedConfig()), jsonWithoutVocab(applied));
  }

  void everyPresetReadsBackUnchanged() {
    for (const std::string& name : presetNames()) {
      ExperimentPanel panel;
      const ExperimentConfig config = preset(name);
      panel.setAppliedConfig(config);
      ExperimentConfig read;
      QCOMPARE(panel.readConfig(read), QString());
      QCOMPARE(jsonWithoutVocab(read), jsonWithoutVocab(config));
      QVERIFY2(!panel.hasChanges(), name.c_str());
    }
  }

  // Edited settings are not the preset's: the applied name says "(edited)" and the description
  // lists what changed instead of the preset's text. A second edit does not mark it twice; a
  // name the user typed is kept.
  void anEditedPresetSaysItIsEdited() {
    ExperimentPanel panel;
    const ExperimentConfig config = preset("induction");
    QVERIFY(!config.description.empty());
    panel.setAppliedConfig(config);
    QSignalSpy applyRequested(&panel, &ExperimentPanel::applyRequested);
    type(panel.field("model.d_model"), "96");
    QVERIFY(panel.apply());
    QCOMPARE(applyRequested.count(), 1);
    const auto edited = applyRequested.takeFirst().first().value<ExperimentConfig>();
    const QString name = QString::fromStdString(config.name);  // "Induction heads"
    QCOMPARE(QString::fromStdString(edited.name), name + " (edited)");
    QCOMPARE(QString::fromStdString(edited.description), QString("Edited from \u201c%1\u201d: model.d_model 64 \u2192 96").arg(name));
    QCOMPARE(edited.model.d_model, 96);

    panel.setAppliedConfig(edited);  // as the window does after applying
    type(panel.field("train.batch"), QString::number(config.train.batch * 2));
    QVERIFY(panel.apply());
    const auto again = applyRequested.takeFirst().first().value<ExperimentConfig>();
    QCOMPARE(QString::fromStdString(again.name), name + " (edited)");
    QVERIFY2(QString::fromStdString(again.description).contains(QString("train.batch %1").arg(config.train.batch)),
             again.description.c_str());

    panel.setAppliedConfig(config);
    auto* nameField = panel.findChild<QLineEdit*>(QStringLiteral("name"));
    QVERIFY(nameField);
    nameField->setText(QStringLiteral("wider"));
    type(panel.field("model.d_model"), "96");
    QVERIFY(panel.apply());
    QCOMPARE(QString::fromStdString(applyRequested.takeFirst().first().value<ExperimentConfig>().name), QString("wider"));
  }

  void revertPutsTheAppliedExperimentBack() {
    ExperimentPanel panel;
    const ExperimentConfig config = preset("induction");
    panel.setAppliedConfig(config);
    type(panel.field("model.d_model"), "96");
    QVERIFY(panel.hasChanges());
    panel.revert();
    QVERIFY(!panel.hasChanges());
    QCOMPARE(panel.field("model.d_model")->text(), QString("64"));
  }
};

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  qRegisterMetaType<ExperimentConfig>();
  ExperimentPanelTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_experiment_panel.moc"
