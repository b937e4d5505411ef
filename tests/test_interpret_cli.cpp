// attnlab-cli hooks and interpret end to end on a freshly trained tiny induction model: each kind's
// JSON rows, text and id prompts alike, --answer / --wrong defaulting to the clean and corrupted
// runs' top predictions, the same commands on a Hugging Face folder (text through its tokenizer;
// retrieval on passkey prompts written with it),
// and one-line errors for bad input.
#include <QtTest>

#include "cli_support.h"
#include "tiny_hf_folder.h"

class TestInterpretCli : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  QString model_;

  QJsonObject json(const QStringList& arguments) {
    const Run run = runCli(arguments);
    if (run.exitCode != 0) qWarning("%s", run.err.constData());
    return run.exitCode == 0 ? QJsonDocument::fromJson(run.out).object() : QJsonObject();
  }

  void failsWith(const QStringList& arguments, const char* reason) {
    const Run run = runCli(arguments);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(reason), run.err.constData());
    QCOMPARE(run.err.count('\n'), 1);
  }

 private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo(cliPath()).isExecutable(), qPrintable("build the attnlab-cli target first: " + cliPath()));
    model_ = tmp_.filePath("tiny");
    const Run train = runCli({"train", "--preset", "induction", "--steps", "15", "--set", "model.d_model=32", "--out", model_, "--quiet"});
    QVERIFY2(train.exitCode == 0, train.err.constData());
  }

  void hooksAreListed() {
    const QJsonObject root = json({"hooks", "--model", model_, "--json"});
    const QJsonArray hooks = root["hooks"].toArray();
    QCOMPARE(hooks.size(), 2 * 8 + 1);  // attention-only: no MLP sites
    QCOMPARE(hooks[0].toObject()["name"].toString(), QString("blocks.0.resid_pre"));
    QCOMPARE(hooks.last().toObject()["name"].toString(), QString("ln_f.out"));
    const Run text = runCli({"hooks", "--model", model_});
    QVERIFY(text.out.contains("blocks.1.attn.pattern"));
  }

  void patchRowsHaveTheirCoordinates() {
    const QJsonObject resid = json({"interpret", "patch", "--model", model_, "--clean", "a b c d a b", "--corrupt", "a e c d a b",
                                    "--answer", "c", "--wrong", "e", "--json"});
    QCOMPARE(resid["format"].toString(), QString("attnlab-interpret-1"));
    QCOMPARE(resid["kind"].toString(), QString("patch"));
    const QJsonArray rows = resid["results"].toArray();
    QCOMPARE(rows.size(), 3 * 6);  // layers 0, 1 and the final residual, x 6 positions
    const QJsonObject last = rows.last().toObject();
    QCOMPARE(last["layer"].toInt(), 2);
    QCOMPARE(last["position"].toInt(), 5);
    QCOMPARE(last["effect"].toDouble(), 1.0);
    QCOMPARE(rows[0].toObject()["effect"].toDouble(), 0.0);  // position 0 is the same in both prompts
    const QJsonObject heads = json({"interpret", "patch", "--model", model_, "--clean-ids", "0,1,2,3,0,1", "--corrupt-ids",
                                    "0,4,2,3,0,1", "--site", "head_out", "--answer-id", "2", "--wrong-id", "4", "--json"});
    QCOMPARE(heads["results"].toArray().size(), 8);
    QVERIFY(heads["results"].toArray()[0].toObject().contains("head"));
    QVERIFY(!heads["results"].toArray()[0].toObject().contains("position"));
    // The ids are the same prompt as the text: the same effects.
    const QJsonObject headsText = json({"interpret", "patch", "--model", model_, "--clean", "a b c d a b", "--corrupt", "a e c d a b",
                                        "--site", "head_out", "--answer", "c", "--wrong", "e", "--json"});
    QCOMPARE(headsText["results"], heads["results"]);
    QCOMPARE(json({"interpret", "patch", "--model", model_, "--clean", "a b c d a b", "--corrupt", "a e c d a b", "--site", "pattern",
                   "--per-position", "--answer", "c", "--wrong", "e", "--json"})["results"].toArray().size(),
             8 * 6);
  }

  void lensDlaAttributionComposition() {
    const QJsonObject lens = json({"interpret", "lens", "--model", model_, "--text", "a b c a", "--top", "3", "--json"});
    QCOMPARE(lens["results"].toArray().size(), 3 * 4);
    QCOMPARE(lens["results"].toArray()[0].toObject()["top"].toArray().size(), 3);
    const QJsonObject dla = json({"interpret", "dla", "--model", model_, "--ids", "0,1,2,0", "--token", "b", "--json"});
    QCOMPARE(dla["token"].toInt(), 1);
    QVERIFY(std::abs(dla["sum"].toDouble() - dla["logit"].toDouble()) < 1e-4);
    QCOMPARE(dla["results"].toArray().size(), 2 + 8);
    const QJsonObject attribution = json({"interpret", "attribution", "--model", model_, "--text", "a b c a", "--json"});
    QCOMPARE(attribution["results"].toArray().size(), 4);
    QVERIFY(attribution.contains("kendall_tau_rollout"));
    const QJsonObject composition = json({"interpret", "composition", "--model", model_, "--json"});
    QCOMPARE(composition["results"].toArray().size(), 16);
    QCOMPARE(composition["copying"].toArray().size(), 8);
    const QJsonObject retrieval = json({"interpret", "retrieval", "--model", model_, "--batches", "1", "--k", "1", "--json"});
    QCOMPARE(retrieval["results"].toArray().size(), 8);
    QCOMPARE(retrieval["top_heads"].toArray().size(), 1);
    QVERIFY(runCli({"interpret", "lens", "--model", model_, "--text", "a b c a"}).out.contains("layer 2"));
  }

  // The lens's final layer at the last position is the run's own top prediction.
  void answerAndWrongDefaultToTheRunsPredictions() {
    auto topTwo = [&](const QString& text) {
      const QJsonArray rows = json({"interpret", "lens", "--model", model_, "--text", text, "--top", "2", "--json"})["results"].toArray();
      const QJsonArray top = rows.last().toObject()["top"].toArray();  // layer 2 (the final residual), last position
      return std::pair<int, int>{top[0].toObject()["token"].toInt(), top[1].toObject()["token"].toInt()};
    };
    for (auto [clean, corrupt] : {std::pair<QString, QString>{"a b c d a b", "a e c d a b"}, {"c a d b c a", "c a e b c a"}}) {
      const QJsonObject patch = json({"interpret", "patch", "--model", model_, "--clean", clean, "--corrupt", corrupt, "--json"});
      const auto [cleanTop, cleanSecond] = topTwo(clean);
      const auto [corruptTop, corruptSecond] = topTwo(corrupt);
      QCOMPARE(patch["answer"].toInt(), cleanTop);
      QCOMPARE(patch["wrong"].toInt(), corruptTop != cleanTop ? corruptTop : corruptSecond);  // never the answer itself
      QCOMPARE(patch["answer_label"].toString().size(), 1);
    }
  }

  // A Hugging Face folder: hooks, each kind with text (its tokenizer, BOS first) or ids alike.
  void huggingFaceFolder() {
    const QString dir = tmp_.filePath("gpt2");
    QCOMPARE(QString::fromStdString(tiny_hf::writeGpt2Folder(dir.toStdString())), QString());
    QCOMPARE(json({"hooks", "--model", dir, "--json"})["hooks"].toArray().size(), 2 * 11 + 1);
    const QJsonObject text = json({"interpret", "patch", "--model", dir, "--clean", "a wo wow", "--corrupt", "b wo wow", "--json"});
    const QJsonObject ids = json({"interpret", "patch", "--model", dir, "--clean-ids", "258,97,257,257,119", "--corrupt-ids",
                                  "258,98,257,257,119", "--answer-id", QString::number(text["answer"].toInt()), "--wrong-id",
                                  QString::number(text["wrong"].toInt()), "--json"});
    QCOMPARE(text["results"].toArray().size(), 3 * 5);
    QCOMPARE(text["results"], ids["results"]);
    QCOMPARE(text["results"].toArray().last().toObject()["effect"].toDouble(), 1.0);
    const QJsonObject dla = json({"interpret", "dla", "--model", dir, "--text", "a wo wow", "--json"});
    QVERIFY(std::abs(dla["sum"].toDouble() - dla["logit"].toDouble()) < 1e-4 * (1 + std::abs(dla["logit"].toDouble())));
    QCOMPARE(dla["results"].toArray().size(), 1 + 2 * 2 + 2 * 3 + 1);  // embed, heads, attn/mlp biases and mlps, ln_f bias
    QCOMPARE(json({"interpret", "lens", "--model", dir, "--ids", "258,97,257", "--json"})["results"].toArray().size(), 3 * 3);
    QCOMPARE(json({"interpret", "attribution", "--model", dir, "--text", "a wo", "--json"})["results"].toArray().size(), 3);
    QCOMPARE(json({"interpret", "composition", "--model", dir, "--json"})["results"].toArray().size(), 4);
    failsWith({"interpret", "retrieval", "--model", dir}, "needs at least");  // 64 positions: too short for a passkey prompt
  }

  // Retrieval on a Hugging Face folder: passkey prompts in its tokenizer's vocabulary; k = 0 masks nothing.
  void retrievalOnAHuggingFaceFolder() {
    const QString dir = tmp_.filePath("llama_long");
    QCOMPARE(QString::fromStdString(tiny_hf::writeLlamaFolder(dir.toStdString(), 2, 4, 2, 16, 160)), QString());
    const QJsonObject study = json({"interpret", "retrieval", "--model", dir, "--length", "120", "--k", "2", "--json"});
    QCOMPARE(study["results"].toArray().size(), 2 * 4);
    QCOMPARE(study["top_heads"].toArray().size(), 2);
    for (const char* key : {"accuracy", "accuracy_top_masked", "accuracy_random_masked", "accuracy_rope_knockout", "accuracy_phase_off"})
      QVERIFY2(study[key].isDouble(), key);
    const QJsonObject none = json({"interpret", "retrieval", "--model", dir, "--k", "0", "--json"});
    QCOMPARE(none["accuracy_top_masked"].toDouble(), none["accuracy"].toDouble());
    QCOMPARE(none["accuracy_random_masked"].toDouble(), none["accuracy"].toDouble());
    QCOMPARE(none["results"].toArray().size(), 2 * 4);
    failsWith({"interpret", "retrieval", "--model", dir, "--length", "161"}, "--length");
    failsWith({"interpret", "retrieval", "--model", model_, "--length", "50"}, "--length is for Hugging Face folders");
    const QString bare = tmp_.filePath("llama_bare");
    QCOMPARE(QString::fromStdString(tiny_hf::writeLlamaFolder(bare.toStdString(), 1, 4, 2, 16, 160)), QString());
    QVERIFY(QFile::remove(bare + "/tokenizer.json"));
    failsWith({"interpret", "retrieval", "--model", bare}, "passkey prompts with the folder's tokenizer");
  }

  void badInputGetsOneLine() {
    failsWith({"interpret", "patch", "--model", model_, "--clean", "a b c", "--corrupt", "a b"}, "equal lengths");
    failsWith({"interpret", "patch", "--model", model_, "--clean", "a b c", "--corrupt", "a b d", "--site", "mlp"}, "unknown patching site");
    failsWith({"interpret", "patch", "--model", model_, "--clean", "a b c", "--corrupt", "a b d", "--site", "mlp_out"}, "attention-only");
    failsWith({"interpret", "patch", "--model", model_, "--clean", "a b c"}, "needs --clean and --corrupt");
    failsWith({"interpret", "lens", "--model", model_, "--ids", "0,x"}, "not a token id");
    failsWith({"interpret", "lens", "--model", model_, "--ids", "0,999"}, "outside the vocabulary");
    failsWith({"interpret", "dla", "--model", model_, "--text", "a b", "--token", "zz"}, "not a token");
    failsWith({"interpret", "nothing", "--model", model_}, "needs a subcommand");
  }
};

QTEST_GUILESS_MAIN(TestInterpretCli)
#include "test_interpret_cli.moc"
