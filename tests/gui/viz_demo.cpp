// viz_demo: trains a preset in-process, then shows the spectra view (through the training
// snapshots) and the 3D query-key embedding of one head, and saves screenshots of both:
//   viz_demo [--preset induction] [--steps N] [--every K] [--layer L] [--head H] [--out DIR] [--show]
// Layer and head are 1-based as in the app. Without --show it exits after saving; with it, the
// windows stay open to try the mouse. Exit 1 when a picture comes out blank.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QImage>
#include <QSurfaceFormat>
#include <QTimer>
#include <cstdio>

#include "io/config_json.h"
#include "qk_embedding_panel.h"
#include "qk_embedding_view.h"
#include "spectrum_view.h"
#include "viz_demo_data.h"

using namespace attnlab;

namespace {

// Share of pixels that differ from the top-left one (a blank picture has none).
double drawnShare(const QImage& image) {
  const QRgb background = image.pixel(0, 0);
  long drawn = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) drawn += image.pixel(x, y) != background;
  return double(drawn) / (double(image.width()) * image.height());
}

bool save(const QImage& image, const QString& path) {
  const double share = drawnShare(image);
  std::printf("viz_demo: %s (%dx%d, %.1f%% drawn)\n", qPrintable(path), image.width(), image.height(), 100 * share);
  return image.save(path) && share > 0.02;
}

// The query whose heaviest key carries the most weight, among the last sequence's second half.
int interestingQuery(const QkEmbeddingData& data) {
  int best = 0;
  float bestWeight = -1;
  const int last = data.queries.back().sequence;
  for (size_t i = 0; i < data.queries.size(); ++i) {
    if (data.queries[i].sequence != last || data.queries[i].role != "repeated token") continue;
    for (const KeyWeight& kw : data.attention[i])
      if (kw.weight > bestWeight && kw.key != int(i)) bestWeight = kw.weight, best = int(i);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  QSurfaceFormat format;  // as app/gui/main.cpp
  format.setVersion(3, 2);
  format.setProfile(QSurfaceFormat::CoreProfile);
  format.setDepthBufferSize(24);
  QSurfaceFormat::setDefaultFormat(format);
  QApplication app(argc, argv);

  QCommandLineParser parser;
  parser.addOptions({{"preset", "preset", "name", "induction"},
                     {"steps", "training steps", "n", "600"},
                     {"every", "steps between spectrum snapshots", "k", "50"},
                     {"layer", "layer of the embedding (1-based)", "l", "2"},
                     {"head", "head of the embedding (1-based)", "h", "1"},
                     {"out", "folder for the screenshots", "dir", "."},
                     {"show", "keep the windows open"}});
  parser.process(app);
  const int steps = parser.value("steps").toInt(), every = std::max(1, parser.value("every").toInt());
  const int layer = parser.value("layer").toInt() - 1, head = parser.value("head").toInt() - 1;

  ExperimentConfig config;
  if (const std::string error = loadPreset(parser.value("preset").toStdString(), config); !error.empty()) {
    std::fprintf(stderr, "viz_demo: %s\n", error.c_str());
    return 2;
  }
  config.train.steps = steps;
  config.train.threads = 1;  // a demo: leave the other core to the window
  Trainer trainer(config);
  if (layer < 0 || layer >= trainer.config().model.n_layers || head < 0 || head >= trainer.config().model.n_heads) {
    std::fprintf(stderr, "viz_demo: no layer %d head %d in this model\n", layer + 1, head + 1);
    return 2;
  }

  auto series = std::make_shared<SpectrumSeries>();
  demo::setNull(trainer.config().model, config.train.seed + 99, *series);
  series->snapshots.push_back(demo::spectraOf(trainer.model(), 0));
  while (!trainer.finished()) {
    const TrainPoint point = trainer.trainStep();
    if (point.step % every == 0 || trainer.finished()) {
      series->snapshots.push_back(demo::spectraOf(trainer.model(), point.step));
      std::printf("viz_demo: step %d loss %.3f\n", point.step, point.loss);
    }
  }
  auto embedding = std::make_shared<QkEmbeddingData>(demo::embeddingOf(trainer, layer, head, 6));

  SpectrumModel spectra;
  spectra.setSeries(series);
  spectra.select(layer, SpectrumModel::kAllHeads);
  SpectrumView spectrumView(&spectra);
  spectrumView.setWindowTitle(QStringLiteral("Spectra"));
  spectrumView.resize(1300, 680);
  spectrumView.show();

  QkEmbeddingModel embeddingModel;
  embeddingModel.setData(embedding);
  embeddingModel.selectQuery(interestingQuery(*embedding));
  QkEmbeddingPanel embeddingPanel(&embeddingModel);
  embeddingPanel.setWindowTitle(QStringLiteral("Query-key embedding"));
  embeddingPanel.resize(1000, 800);
  embeddingPanel.show();

  const QDir out(parser.value("out"));
  bool ok = true;
  QTimer::singleShot(500, &app, [&] {
    ok &= save(spectrumView.grab().toImage(), out.filePath("spectrum.png"));
    spectra.setSnapshot(0);  // the untrained model beside its random null
    spectra.setFitToSnapshot(true);
    ok &= save(spectrumView.grab().toImage(), out.filePath("spectrum-start.png"));
    spectra.setSnapshot(spectra.snapshotCount() - 1);
    spectra.setFitToSnapshot(false);
    ok &= save(embeddingPanel.grab().toImage(), out.filePath("embedding.png"));
    embeddingPanel.view()->rotateCamera(60, 15);
    ok &= save(embeddingPanel.grab().toImage(), out.filePath("embedding-turned.png"));
    embeddingModel.setColorBy(QkEmbeddingModel::ColorBy::Role);
    ok &= save(embeddingPanel.grab().toImage(), out.filePath("embedding-roles.png"));
    if (!parser.isSet("show")) QApplication::exit(ok ? 0 : 1);
  });
  const int status = app.exec();
  return parser.isSet("show") ? status : (ok ? 0 : 1);
}
