#include "launch_options.h"

#include <QCommandLineParser>

#include "io/config_json.h"
#include "view_kind.h"
#include "io/comparison_file.h"
#include "main_window.h"
#include "tour_library.h"

namespace attnlab {

namespace {

bool parsePositive(const QString& text, int& out) {
  bool ok = false;
  out = text.toInt(&ok);
  return ok && out > 0;
}

}  // namespace

QString parseLaunchOptions(const QStringList& arguments, LaunchOptions& out) {
  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Attention Lab: train small Transformers and watch their attention."));
  const QCommandLineOption help = parser.addHelpOption();
  // The first start shows something soon: induction heads form after about 250 steps (well
  // under two minutes on 2 cores), where the toy language (preset "default") needs its 2,000.
  const QCommandLineOption preset(QStringLiteral("preset"),
                                  QStringLiteral("Experiment preset to open (default: induction; the toy language is 'default')."),
                                  QStringLiteral("NAME"), QStringLiteral("induction"));
  const QCommandLineOption steps(QStringLiteral("steps"), QStringLiteral("Number of training steps."), QStringLiteral("N"));
  const QCommandLineOption set(QStringLiteral("set"),
                               QStringLiteral("Override one setting, e.g. model.d_model=64 (repeatable)."),
                               QStringLiteral("KEY=VALUE"));
  const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                      QStringLiteral("Save a picture of the window to FILE (needs --quit-after-steps)."),
                                      QStringLiteral("FILE"));
  const QCommandLineOption quitAfter(QStringLiteral("quit-after-steps"),
                                     QStringLiteral("Train N steps, save the --screenshot / --export, and exit."), QStringLiteral("N"));
  const QCommandLineOption layer(QStringLiteral("layer"), QStringLiteral("Layer whose attention is shown first (1-based)."),
                                 QStringLiteral("L"));
  const QCommandLineOption head(QStringLiteral("head"), QStringLiteral("Head whose attention is shown first (1-based)."),
                                QStringLiteral("H"));
  const QCommandLineOption exportFile(QStringLiteral("export"),
                                      QStringLiteral("Export the shown view to FILE (.png, .svg or .csv), or every view as PNG into DIR/ "
                                                     "(needs --quit-after-steps)."),
                                      QStringLiteral("FILE|DIR/"));
  const QCommandLineOption view(QStringLiteral("view"),
                                QStringLiteral("View shown first: %1.").arg(viewKindIds().join(QStringLiteral(", "))),
                                QStringLiteral("NAME"));
  const QCommandLineOption compare(QStringLiteral("compare"),
                                   QStringLiteral("Open presets side by side in a comparison window (2 to 4, comma separated); "
                                                  "--view then names the view every run shows."),
                                   QStringLiteral("PRESET,PRESET[,...]"));
  const QCommandLineOption model(QStringLiteral("model"),
                                 QStringLiteral("Open a Hugging Face model folder (config.json + model.safetensors) instead of an "
                                                "experiment; with --quit-after-steps (any N, 0 too) the capture shows its probe; with --tour, the model "
                                                "a tour on a real model uses."),
                                 QStringLiteral("DIR"));
  const QCommandLineOption benchmarkUi(QStringLiteral("benchmark-ui"),
                                       QStringLiteral("Train --steps steps (default 20) measuring the UI thread's timer latency, then "
                                                      "time heatmap redraws; print a table and exit. With --model DIR: trace a "
                                                      "1,024-token probe of that model instead, then time the views' redraws."));
  const QCommandLineOption benchmarkOut(QStringLiteral("out"), QStringLiteral("With --benchmark-ui: also write the figures to FILE as JSON."),
                               QStringLiteral("FILE"));
  const QCommandLineOption tours(QStringLiteral("tours"), QStringLiteral("List the tours: name and title, one per line."));
  const QCommandLineOption tour(QStringLiteral("tour"), QStringLiteral("Start the tour NAME (see --tours), or the tour in FILE.tour."),
                                QStringLiteral("NAME|FILE.tour"));
  const QCommandLineOption check(QStringLiteral("check"),
                                 QStringLiteral("With --tour: run every step without waiting, print each step's checks, exit 0 "
                                                "only if every step ran and every check held."));
  const QCommandLineOption screenshots(QStringLiteral("screenshots"), QStringLiteral("With --tour and --check: save a picture of every step into DIR."),
                                       QStringLiteral("DIR"));
  const QCommandLineOption shortRun(QStringLiteral("short"),
                                    QStringLiteral("With --tour: run the tour's short variant (what its @short-note states; ctest runs it), "
                                                   "or the tour itself when it has none."));
  const QCommandLineOption presenter(QStringLiteral("presenter"), QStringLiteral("Start in presenter mode (full screen, large text, high contrast)."));
  parser.addOptions({preset, steps, set, screenshot, exportFile, quitAfter, layer, head, view, compare, benchmarkUi, benchmarkOut,
                     tours, tour, check, screenshots, shortRun, presenter, model});

  if (!parser.parse(arguments)) return parser.errorText();
  if (parser.isSet(help)) {
    out.showHelp = true;
    out.helpText = parser.helpText();
    return {};
  }
  if (!parser.positionalArguments().isEmpty())
    return QStringLiteral("unexpected argument '%1' (see --help)").arg(parser.positionalArguments().first());

  out.listTours = parser.isSet(tours);
  out.tourName = parser.value(tour);
  out.tourCheck = parser.isSet(check);
  out.tourScreenshots = parser.value(screenshots);
  out.tourShort = parser.isSet(shortRun);
  out.presenter = parser.isSet(presenter);
  if (out.tourCheck && out.tourName.isEmpty()) return QStringLiteral("--check goes with --tour NAME");
  if (out.tourShort && out.tourName.isEmpty()) return QStringLiteral("--short goes with --tour NAME");
  if (parser.isSet(screenshots) && !out.tourCheck) return QStringLiteral("--screenshots DIR goes with --tour NAME --check");
  if (out.tourName.endsWith(QLatin1String(".tour"))) {
    if (const QString why = loadTourFile(out.tourName, out.tourFile); !why.isEmpty()) return why;
    out.tourName = QString::fromStdString(out.tourFile.name);
  } else if (!out.tourName.isEmpty() && !shippedTours().find(out.tourName)) {
    return QStringLiteral("unknown tour '%1' (attnlab --tours lists them)").arg(out.tourName);
  }
  if (!out.tourName.isEmpty() && (parser.isSet(compare) || parser.isSet(quitAfter) || parser.isSet(benchmarkUi)))
    return QStringLiteral("--tour does not go with --compare, --quit-after-steps or --benchmark-ui");

  out.presetName = parser.value(preset);
  out.experimentChosen = parser.isSet(preset) || parser.isSet(set) || parser.isSet(steps);
  std::string error = loadPreset(out.presetName.toStdString(), out.config);
  if (!error.empty()) return QString::fromStdString(error);
  for (const QString& assignment : parser.values(set)) {
    error = applyOverride(out.config, assignment.toStdString());
    if (!error.empty()) return QString::fromStdString(error);
  }
  if (parser.isSet(steps) && !parsePositive(parser.value(steps), out.config.train.steps))
    return QStringLiteral("--steps needs a positive whole number, got '%1'").arg(parser.value(steps));

  out.benchmarkUi = parser.isSet(benchmarkUi);
  if (out.benchmarkUi && parser.isSet(steps)) out.benchmarkSteps = out.config.train.steps;
  if (out.benchmarkUi && parser.isSet(quitAfter)) return QStringLiteral("--benchmark-ui and --quit-after-steps do not go together");
  if (parser.isSet(benchmarkOut) && !out.benchmarkUi) return QStringLiteral("--out FILE goes with --benchmark-ui");
  out.benchmarkOut = parser.value(benchmarkOut);
  if ((parser.isSet(screenshot) || parser.isSet(exportFile)) != parser.isSet(quitAfter))
    return QStringLiteral("--screenshot FILE (or --export FILE) and --quit-after-steps N go together");
  out.exportFile = parser.value(exportFile);
  if (parser.isSet(compare)) {
    const QStringList names = parser.value(compare).split(QLatin1Char(','), Qt::SkipEmptyParts);
    if (names.size() < ComparisonDocument::kMinRuns || names.size() > ComparisonDocument::kMaxRuns)
      return QStringLiteral("--compare needs 2 to 4 presets separated by commas, got '%1'").arg(parser.value(compare));
    if (parser.isSet(exportFile)) return QStringLiteral("--export does not apply to --compare (use --screenshot)");
    if (out.benchmarkUi) return QStringLiteral("--benchmark-ui measures the main window, not --compare");
    for (const QString& name : names) {
      ExperimentConfig config;
      error = loadPreset(name.trimmed().toStdString(), config);
      for (const QString& assignment : parser.values(set))
        if (error.empty()) error = applyOverride(config, assignment.toStdString());
      if (error.empty() && parser.isSet(steps)) config.train.steps = out.config.train.steps;
      if (error.empty()) error = validate(config);
      if (!error.empty()) return QString::fromStdString(error);
      out.compare.push_back(config);
    }
  }
  if (parser.isSet(view) && (out.view = viewKindIndex(parser.value(view))) < 0)
    return QStringLiteral("--view needs one of %1, got '%2'").arg(viewKindIds().join(QStringLiteral(", ")), parser.value(view));
  out.modelDir = parser.value(model);
  if (!out.modelDir.isEmpty() && parser.isSet(compare))
    return QStringLiteral("--model opens one model in the main window; it does not go with --compare");
  out.captureOpened = !out.modelDir.isEmpty() && parser.isSet(quitAfter);
  if (out.captureOpened) {
    bool ok = false;
    if (parser.value(quitAfter).toInt(&ok) < 0 || !ok)
      return QStringLiteral("--quit-after-steps needs a whole number, got '%1'").arg(parser.value(quitAfter));
  } else if (parser.isSet(quitAfter) && !parsePositive(parser.value(quitAfter), out.quitAfterSteps))
    return QStringLiteral("--quit-after-steps needs a positive whole number, got '%1'").arg(parser.value(quitAfter));
  out.screenshotFile = parser.value(screenshot);
  if (parser.isSet(layer) && (!parsePositive(parser.value(layer), out.layer) || out.layer-- > out.config.model.n_layers))
    return QStringLiteral("--layer needs a layer from 1 to %1, got '%2'").arg(out.config.model.n_layers).arg(parser.value(layer));
  if (parser.isSet(head) && (!parsePositive(parser.value(head), out.head) || out.head-- > out.config.model.n_heads))
    return QStringLiteral("--head needs a head from 1 to %1, got '%2'").arg(out.config.model.n_heads).arg(parser.value(head));

  error = validate(out.config);
  return QString::fromStdString(error);
}

}  // namespace attnlab
