// Length extrapolation: models run on sequences longer than their context for every encoding
// that covers any position (the prefix of a long run equals the short run: the positions really
// are the same), decoding past the context equals the full forward, a learned table refuses
// with one clear line, the trainer evaluates at multiples of its training length, and the tasks
// build evaluation data at any length.
#include <QtTest>

#include <omp.h>

#include <cmath>

#include "data/task.h"
#include "kv/decoder.h"
#include "positional/length_limit.h"
#include "model/workspace.h"
#include "model_support.h"
#include "train/length_eval.h"

using namespace attnlab;

namespace {
using testing::randomisedModel;
using testing::smallConfig;

constexpr int kContext = 8;

std::vector<int> tokensOf(int T, uint64_t seed) {
  Rng rng(seed);
  std::vector<int> tokens(T);
  for (int& t : tokens) t = rng.uniformInt(0, 8);
  return tokens;
}

Mat logitsOf(const Model& model, const std::vector<int>& tokens) {
  auto ws = makeWorkspace();
  const std::vector<int> targets(tokens.size(), -1);
  model.forward(*ws, tokens.data(), targets.data(), 1, static_cast<int>(tokens.size()));
  return workspaceLogits(*ws);
}

// "rope" or "rope:ntk_scale=4" -> a small model with that encoding.
ModelConfig configFor(const QString& spec, const std::string& attention = "softmax") {
  ModelConfig c = smallConfig(attention, spec.section(':', 0, 0).toStdString(), 9, kContext);
  const QString setting = spec.section(':', 1, 1);
  if (!setting.isEmpty()) c.positional_settings[setting.section('=', 0, 0).toStdString()] = setting.section('=', 1, 1).toDouble();
  return c;
}

const QStringList kExtrapolating = {"none", "sinusoidal", "rope", "rope:ntk_scale=4", "alibi", "alibi_log",
                                    "accumulated_rotation", "accumulated_rotation:omega_mode=1"};

ExperimentConfig inductionExperiment(const std::string& positional) {
  ExperimentConfig e;
  e.model = smallConfig("softmax", positional, 0, 16);
  e.model.attention_only = true;
  e.task.name = "induction";
  e.task.settings = {{"length", 8}, {"symbols", 24}};
  e.train.steps = 10;
  e.train.batch = 8;
  e.train.warmup = 0;
  e.train.threads = 1;
  e.train.eval_batches = 2;
  return e;
}
}  // namespace

class TestLengthExtrapolation : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    omp_set_num_threads(1);
    Eigen::setNbThreads(1);
  }

  // A causal model's first rows do not see later tokens, so the first `context` rows of a run at
  // 4x the context equal a run of just those tokens: same positions, same maps, finite everywhere.
  void runsBeyondItsContext_data() {
    QTest::addColumn<QString>("encoding");
    QTest::addColumn<QString>("attention");
    for (const QString& e : kExtrapolating)
      for (const char* a : {"softmax", "sigmoid"}) QTest::newRow(qPrintable(e + "/" + a)) << e << QString(a);
  }
  void runsBeyondItsContext() {
    QFETCH(QString, encoding);
    QFETCH(QString, attention);
    const auto model = randomisedModel(configFor(encoding, attention.toStdString()));
    const std::vector<int> tokens = tokensOf(4 * kContext, 5);
    QCOMPARE(lengthRefusal(model->config(), 4 * kContext), std::string());
    const Mat full = logitsOf(*model, tokens);
    QCOMPARE(static_cast<int>(full.rows()), 4 * kContext);
    QVERIFY(full.allFinite());
    const Mat prefix = logitsOf(*model, std::vector<int>(tokens.begin(), tokens.begin() + kContext));
    const double error = (full.topRows(kContext) - prefix).cwiseAbs().maxCoeff();
    QVERIFY2(error < 1e-4, qPrintable(QString("prefix differs by %1").arg(error)));
  }

  // Decoding one token at a time past the context equals the full forward at that length.
  void decodesBeyondItsContext_data() {
    QTest::addColumn<QString>("encoding");
    for (const QString& e : kExtrapolating) QTest::newRow(qPrintable(e)) << e;
  }
  void decodesBeyondItsContext() {
    QFETCH(QString, encoding);
    const auto model = randomisedModel(configFor(encoding));
    const std::vector<int> tokens = tokensOf(3 * kContext, 9);
    const Mat full = logitsOf(*model, tokens);
    Decoder decoder(*model, makeEvictionPolicy("full", {}, model->config()), "full", Budget{});
    double worst = 0;
    for (size_t t = 0; t < tokens.size(); ++t)
      worst = std::max(worst, static_cast<double>((decoder.step(tokens[t]) - full.row(static_cast<Eigen::Index>(t))).cwiseAbs().maxCoeff()));
    QCOMPARE(decoder.position(), 3 * kContext);
    QVERIFY2(worst < 2e-5 * std::max(1.0f, full.cwiseAbs().maxCoeff()), qPrintable(QString("decode differs by %1").arg(worst)));
  }

  // A learned table has rows for the trained positions only: forward, decoding and evaluation
  // beyond it refuse with one line naming the encoding and the ones that extrapolate.
  void learnedPositionsRefuse() {
    const auto model = randomisedModel(configFor("learned"));
    QCOMPARE(lengthRefusal(model->config(), kContext), std::string());
    const std::string why = lengthRefusal(model->config(), kContext + 1);
    QVERIFY(why.find("learned positions exist only for the trained positions") != std::string::npos);
    QVERIFY(why.find("context of 8") != std::string::npos && why.find("rope") != std::string::npos);
    QVERIFY(why.find('\n') == std::string::npos);
    const std::vector<int> tokens = tokensOf(2 * kContext, 3);
    try {
      logitsOf(*model, tokens);
      QFAIL("expected a refusal");
    } catch (const std::invalid_argument& e) {
      QCOMPARE(std::string(e.what()), lengthRefusal(model->config(), 2 * kContext));
    }
    Decoder decoder(*model, makeEvictionPolicy("full", {}, model->config()), "full", Budget{});
    for (int t = 0; t < kContext; ++t) decoder.step(tokens[t]);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, decoder.step(tokens[kContext]));

    Trainer trainer(inductionExperiment("learned"));
    try {
      evaluateAtLength(trainer, 2 * trainer.sequenceLength(), 1);
      QFAIL("expected a refusal");
    } catch (const ConfigError& e) {
      QVERIFY(QString(e.what()).contains("learned positions exist only"));
    }
  }

  // A RoPE model trained on induction evaluates at 2x and 4x its context; the training length
  // gives exactly the plain evaluation, and longer sequences score more answer tokens.
  void trainerEvaluatesRopeAtMultiplesOfItsLength() {
    Trainer trainer(inductionExperiment("rope"));
    for (int s = 0; s < 10; ++s) trainer.trainStep();
    const int T = trainer.sequenceLength();
    QCOMPARE(T, 15);
    const EvalResult base = trainer.evaluate(2), same = evaluateAtLength(trainer, T, 2);
    QCOMPARE(same.loss, base.loss);
    QCOMPARE(same.accuracy, base.accuracy);
    long previous = base.tokens;
    for (const int multiple : {2, 4}) {
      const EvalResult r = evaluateAtLength(trainer, multiple * T, 2);  // 30 and 60 tokens, context 16
      QVERIFY(std::isfinite(r.loss) && r.loss > 0);
      QVERIFY(r.accuracy >= 0 && r.accuracy <= 1);
      QVERIFY2(r.tokens > previous, qPrintable(QString("%1 answers at %2x").arg(r.tokens).arg(multiple)));
      previous = r.tokens;
    }
    QVERIFY_THROWS_EXCEPTION(ConfigError, evaluateAtLength(trainer, 1, 1));  // shorter than the task can build
  }

  // The tasks of the extrapolation study build sequences of any length from their training
  // distribution: every row has answers, every token is in the vocabulary, and passkey and
  // associative recall keep their number of answers (a longer haystack, the same question).
  void tasksBuildAnyLength_data() {
    QTest::addColumn<QString>("task");
    QTest::addColumn<int>("natural");
    QTest::newRow("passkey") << "passkey" << 64;
    QTest::newRow("induction") << "induction" << 31;
    QTest::newRow("copy") << "copy" << 32;
    QTest::newRow("associative_recall") << "associative_recall" << 26;
  }
  void tasksBuildAnyLength() {
    QFETCH(QString, task);
    QFETCH(int, natural);
    TaskConfig config;
    config.name = task.toStdString();
    std::string error;
    const auto t = makeTask(config, error);
    QVERIFY2(t, error.c_str());
    QCOMPARE(t->sequenceLength(100000), natural);
    bool inVocabulary = true;
    auto answersPerRow = [&](int T) {
      Rng rng(4);
      const Batch b = t->sample(3, T, Split::Validation, rng);
      std::vector<int> answers(3, 0);
      for (int i = 0; i < 3 * T; ++i) {
        inVocabulary = inVocabulary && b.inputs[i] >= 0 && b.inputs[i] < t->vocabulary().size();
        answers[i / T] += b.targets[i] >= 0;
      }
      return answers;
    };
    const std::vector<int> base = answersPerRow(natural);
    for (const int multiple : {2, 8}) {
      const std::vector<int> longer = answersPerRow(multiple * natural);
      for (int row = 0; row < 3; ++row) {
        QVERIFY(longer[row] > 0);
        if (task == "passkey" || task == "associative_recall") QCOMPARE(longer[row], base[row]);
      }
    }
    QVERIFY(inVocabulary);
  }
};

QTEST_APPLESS_MAIN(TestLengthExtrapolation)
#include "test_length_extrapolation.moc"
