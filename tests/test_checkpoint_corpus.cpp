// A text-file experiment's folder is self-contained: saved, moved elsewhere, its original text file
// deleted, it opens with the same weights, history, vocabulary and probe, trains on identically
// to the run that never moved, and saving it again keeps its corpus. A checkpoint whose config
// names an absolute text file (saved before corpora were kept) still opens while that file exists,
// and once it has moved, opens with the moved file ("Locate file...") but refuses another text.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

#include "io/checkpoint.h"
#include "io/checkpoint_corpus.h"
#include "io/config_json.h"
#include "core/files.h"

using namespace attnlab;
namespace fs = std::filesystem;

namespace {

std::string fileBytes(const fs::path& path) {
  std::string bytes;
  if (const std::string why = readWholeFile(path.string(), bytes); !why.empty()) qFatal("%s", why.c_str());
  return bytes;
}

ExperimentConfig textConfig(const std::string& textPath) {
  ExperimentConfig c;
  c.task.name = "text";
  c.task.text_path = textPath;
  c.model.d_model = 16;
  c.model.n_layers = 1;
  c.model.n_heads = 2;
  c.model.d_ff = 32;
  c.model.context = 16;
  c.train.steps = 20;
  c.train.batch = 4;
  c.train.warmup = 2;
  c.train.eval_every = 1000;
  return c;
}

void writeText(const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < 200; ++i) out << "the quick brown fox jumps over the lazy dog " << i << ". ";
}

}  // namespace

class TestCheckpointCorpus : public QObject {
  Q_OBJECT
 private slots:
  void movedFolderOpensWithoutTheOriginalFile() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const fs::path text = root / "my text.txt";
    writeText(text);
    Trainer trainer(textConfig(text.string()));
    for (int i = 0; i < 5; ++i) trainer.trainStep();
    const fs::path saved = root / "saved";
    QCOMPARE(QString::fromStdString(saveCheckpoint(saved.string(), trainer)), QString());
    QCOMPARE(fileBytes(saved / "corpus.txt"), fileBytes(text));
    QVERIFY(fileBytes(saved / "config.json").find("\"text_path\": \"corpus.txt\"") != std::string::npos);

    // Another machine: the folder moved, the text file gone.
    const fs::path moved = root / "elsewhere" / "shared";
    fs::create_directories(moved.parent_path());
    fs::rename(saved, moved);
    fs::remove(text);
    LoadedCheckpoint loaded;
    QCOMPARE(QString::fromStdString(loadCheckpoint(moved.string(), loaded)), QString());
    Trainer& reopened = *loaded.trainer;
    QCOMPARE(reopened.stepsDone(), 5);
    const auto& a = trainer.model().params().all();
    const auto& b = reopened.model().params().all();
    QCOMPARE(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) QVERIFY2(a[i]->value == b[i]->value, a[i]->name.c_str());
    QCOMPARE(reopened.history().size(), trainer.history().size());
    for (size_t i = 0; i < trainer.history().size(); ++i) QCOMPARE(reopened.history()[i].loss, trainer.history()[i].loss);
    QVERIFY(reopened.probeTokens() == trainer.probeTokens());
    QCOMPARE(reopened.task().vocabulary().size(), trainer.task().vocabulary().size());

    // It trains on as the run that never moved, and a save keeps the corpus.
    for (int i = 0; i < 3; ++i) QCOMPARE(reopened.trainStep().loss, trainer.trainStep().loss);
    const fs::path again = root / "again";
    QCOMPARE(QString::fromStdString(saveCheckpoint(again.string(), reopened)), QString());
    QCOMPARE(fileBytes(again / "corpus.txt"), fileBytes(moved / "corpus.txt"));
    QCOMPARE(QString::fromStdString(saveCheckpoint(moved.string(), reopened)), QString());  // into its own folder
    LoadedCheckpoint resaved;
    QCOMPARE(QString::fromStdString(loadCheckpoint(moved.string(), resaved)), QString());
    QCOMPARE(resaved.trainer->stepsDone(), 8);
  }

  void anAbsolutePathStillOpens() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const fs::path text = root / "corpus elsewhere.txt";
    writeText(text);
    Trainer trainer(textConfig(text.string()));
    trainer.trainStep();
    const fs::path saved = root / "old-style";
    QCOMPARE(QString::fromStdString(saveCheckpoint(saved.string(), trainer)), QString());
    // As an older version wrote it: the absolute path, no copy.
    ExperimentConfig config = trainer.config();
    config.model.vocab = trainer.model().config().vocab;
    QCOMPARE(QString::fromStdString(writeFileAtomic((saved / "config.json").string(), configToJson(config))), QString());
    fs::remove(saved / "corpus.txt");
    LoadedCheckpoint loaded;
    QCOMPARE(QString::fromStdString(loadCheckpoint(saved.string(), loaded)), QString());
    QCOMPARE(loaded.config.task.text_path, text.string());
    QCOMPARE(missingCorpus(saved.string()), std::string());  // the file is there
    const fs::path moved = root / "moved away.txt";
    fs::rename(text, moved);
    LoadedCheckpoint missing;
    const QString why = QString::fromStdString(loadCheckpoint(saved.string(), missing));
    QVERIFY2(why.contains("no such file") && why.contains(QString::fromStdString(text.string())), qPrintable(why));

    // "Locate file...": the folder names the missing file; opened with the moved one, it is the same run.
    QCOMPARE(missingCorpus(saved.string()), text.string());
    LoadedCheckpoint located;
    QCOMPARE(QString::fromStdString(loadCheckpointOnText(saved.string(), moved.string(), located)), QString());
    const auto& a = trainer.model().params().all();
    const auto& b = located.trainer->model().params().all();
    for (size_t i = 0; i < a.size(); ++i) QVERIFY2(a[i]->value == b[i]->value, a[i]->name.c_str());
    QCOMPARE(located.trainer->trainStep().loss, trainer.trainStep().loss);
    // Another text is refused: its characters do not give the saved vocabulary.
    const fs::path other = root / "other.txt";
    std::ofstream(other) << "zzzz yyyy xxxx";
    LoadedCheckpoint wrong;
    QVERIFY(!loadCheckpointOnText(saved.string(), other.string(), wrong).empty());
  }
};

QTEST_GUILESS_MAIN(TestCheckpointCorpus)
#include "test_checkpoint_corpus.moc"
