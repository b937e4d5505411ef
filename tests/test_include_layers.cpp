// The include graph, read from the source tree: every engine folder includes only folders below it
// in kLayers (so no two folders include each other, directly or round a cycle), the engine includes
// no Qt and nothing of models/, views/ or app/, models/ nothing of views/ or app/, and views/
// nothing of app/. A new engine folder must be given its layer here.
#include <QtTest>

#include <QDirIterator>
#include <QRegularExpression>

namespace {

// Lowest first. Folders in one row may not include each other.
const QList<QStringList> kLayers = {
    {"core"},                                    // tensors, registry, settings, files, UTF-8, ParamStore
    {"config"},                                  // ModelConfig, TaskConfig, TrainConfig: the ground types
    {"attention", "positional", "tokenizer"},    // the families a block is made of, and tokenizers
    {"data"},                                    // tasks and their data
    {"model"},                                   // the blocks and the model
    {"experiment"},                              // ExperimentConfig and validate(), which asks every family
    {"train"},                                   // the trainer
    {"kv", "hf", "sample"},                      // decoding with a cache, Hugging Face models, sampling
    {"io"},                                      // checkpoints and the lab's file formats
    {"analysis"},                                // the analyses
    {"interpret"},                               // the causal analyses
};

int layerOf(const QString& folder) {
  for (int i = 0; i < kLayers.size(); ++i)
    if (kLayers[i].contains(folder)) return i;
  return -1;
}

// (file relative to `root`, included path) for every #include "..." under root/sub.
QList<QPair<QString, QString>> includes(const QString& root, const QString& sub) {
  QList<QPair<QString, QString>> out;
  const QRegularExpression line(QStringLiteral("^\\s*#\\s*include\\s*[\"<]([^\">]+)[\">]"), QRegularExpression::MultilineOption);
  QDirIterator it(root + "/" + sub, {"*.h", "*.cpp", "*.inc"}, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    QFile file(it.next());
    if (!file.open(QIODevice::ReadOnly)) continue;
    const QString text = QString::fromUtf8(file.readAll());
    for (auto m = line.globalMatch(text); m.hasNext();) out.append({QDir(root).relativeFilePath(file.fileName()), m.next().captured(1)});
  }
  return out;
}

}  // namespace

class TestIncludeLayers : public QObject {
  Q_OBJECT

 private slots:
  void everyEngineFolderHasALayer() {
    const QDir engine(ATTNLAB_SOURCE_DIR "/engine");
    for (const QString& folder : engine.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
      QVERIFY2(layerOf(folder) >= 0, qPrintable("engine/" + folder + " has no layer in kLayers"));
  }

  void engineFoldersIncludeOnlyLowerOnes() {
    QStringList upward;
    int edges = 0;
    for (const auto& [file, path] : includes(ATTNLAB_SOURCE_DIR "/engine", "")) {
      const QString from = file.section('/', 0, 0), to = path.section('/', 0, 0);
      if (!path.contains('/') || layerOf(to) < 0 || from == to) continue;
      ++edges;
      if (layerOf(to) >= layerOf(from)) upward << "engine/" + file + " includes " + path;
    }
    QVERIFY(edges > 100);  // the walk saw the engine
    QVERIFY2(upward.isEmpty(), qPrintable(upward.join('\n')));
  }

  void outerLayersPointInward() {
    // models/, views/ and app/ include each other's headers by bare name: find who owns each name
    const QString root = ATTNLAB_SOURCE_DIR;
    QHash<QString, QSet<QString>> owners;
    for (const QString top : {"models", "views", "app"}) {
      QDirIterator it(root + "/" + top, {"*.h"}, QDir::Files, QDirIterator::Subdirectories);
      while (it.hasNext()) owners[QFileInfo(it.next()).fileName()].insert(top);
    }
    const QList<QPair<QString, QStringList>> banned = {{"engine", {"models", "views", "app"}}, {"models", {"views", "app"}}, {"views", {"app"}}};
    QStringList wrong;
    for (const auto& [folder, above] : banned)
      for (const auto& [file, path] : includes(root, folder)) {
        if (folder == "engine" && path.startsWith('Q') && !path.contains('.')) wrong << file + " includes Qt's " + path;
        const QSet<QString> own = owners.value(path);
        if (own.contains(folder)) continue;  // its own folder's header of that name
        for (const QString& top : above)
          if (own.contains(top)) wrong << file + " includes " + top + "/" + path;
      }
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join('\n')));
  }
};

QTEST_MAIN(TestIncludeLayers)
#include "test_include_layers.moc"
