#include "model_opener.h"

#include <QDir>
#include <QProgressDialog>
#include <QTimer>
#include <QWidget>

#include "background_job.h"
#include "hf/hf_vocabulary.h"

namespace attnlab {

namespace {
constexpr int kIdProbeLength = 16;  // a folder without a tokenizer starts with ids 0..15
constexpr int kProgressPollMs = 100;
// "ORG/NAME" for a snapshot of the Hugging Face cache (models--ORG--NAME/snapshots/HASH), else the folder's name.
QString modelName(const std::string& path) {
  QDir dir(QString::fromStdString(path));
  const QString own = dir.dirName();
  if (dir.cdUp() && dir.dirName() == QLatin1String("snapshots") && dir.cdUp() && dir.dirName().startsWith(QLatin1String("models--")))
    return dir.dirName().mid(8).replace(QLatin1String("--"), QLatin1String("/"));
  return own;
}

}  // namespace

const char* const ModelOpener::kProbeText = "The quick brown fox jumps over the lazy dog, and the dog sleeps.";

ModelOpener::ModelOpener(QWidget* window) : QObject(window), window_(window), job_(new BackgroundJob(this)) {
  connect(job_, &BackgroundJob::failed, this, [this](const QString& message) {
    finished();
    emit refused({}, message);
  });
}

ModelOpener::~ModelOpener() { cancel(); }

bool ModelOpener::busy() const { return job_->busy(); }
void ModelOpener::waitForIdle() { job_->waitForIdle(); }

void ModelOpener::cancel() {
  if (cancelled_) cancelled_->store(true);
}

void ModelOpener::open(const QString& dir) {
  cancel();
  auto cancelled = cancelled_ = std::make_shared<std::atomic<bool>>(false);
  auto permille = permille_ = std::make_shared<std::atomic<int>>(0);
  const std::string path = dir.toStdString();

  hf::HfModelInfo peek;  // config.json alone: cheap, and it tells whether the load deserves a progress bar
  if (hf::readHfConfig(path, peek).empty() && hf::parameterCount(peek.config) * sizeof(float) >= kProgressBytes) {
    progress_ = new QProgressDialog(tr("Opening %1\u2026").arg(QDir::toNativeSeparators(dir)), tr("Cancel"), 0, 1000, window_);
    progress_->setWindowTitle(tr("Open Model"));
    progress_->setWindowModality(Qt::WindowModal);
    progress_->setMinimumDuration(0);
    progress_->setValue(0);
    connect(progress_, &QProgressDialog::canceled, this, &ModelOpener::cancel);
    auto* poll = new QTimer(progress_);
    connect(poll, &QTimer::timeout, this, [this, permille] {
      if (progress_) progress_->setValue(permille->load());
    });
    poll->start(kProgressPollMs);
  }

  job_->submit([this, dir, path, cancelled, permille]() -> BackgroundJob::Delivery {
    auto opened = std::make_shared<OpenedHfModel>();
    const std::string why = hf::openHfModel(path, opened->model, opened->info, [&](double fraction) {
      permille->store(static_cast<int>(fraction * 1000));
      return !cancelled->load() && !BackgroundJob::stopRequested();
    });
    if (!why.empty()) {
      const QString message = cancelled->load() ? tr("Opening %1 was cancelled").arg(dir) : QString::fromStdString(why);
      return [this, dir, message] {
        finished();
        emit refused(dir, message);
      };
    }
    opened->vocabulary = std::make_shared<const Vocabulary>(hf::hfVocabulary(path, opened->info.config.vocab, opened->tokenizerProblem));
    if (!hf::encodeForModel(*opened->vocabulary, kProbeText, opened->info.config.vocab, opened->probe).empty() ||
        opened->probe.size() < 2) {
      opened->probe.clear();
      for (int id = 0; id < std::min(kIdProbeLength, opened->info.config.vocab); ++id) opened->probe.push_back(id);
    }
    if (static_cast<int>(opened->probe.size()) > opened->info.config.context) opened->probe.resize(opened->info.config.context);
    return [this, opened] {
      finished();
      emit this->opened(opened);
    };
  });
}

void ModelOpener::finished() {
  if (progress_) progress_->deleteLater();
  progress_ = nullptr;
}

QString ModelOpener::name(const OpenedHfModel& opened) { return modelName(opened.info.dir); }

QString ModelOpener::describe(const OpenedHfModel& opened) {
  const ModelConfig& c = opened.info.config;
  const double millions = static_cast<double>(opened.info.parameters) / 1e6;
  QString text = tr("%1 (%2) \u00b7 %3 layers \u00d7 %4 heads \u00b7 d_model %5 \u00b7 context %6 \u00b7 %7 M parameters, %8 \u00b7 opened, not trainable here")
                     .arg(modelName(opened.info.dir), QString::fromStdString(opened.info.model_type))
                     .arg(c.n_layers)
                     .arg(c.n_heads)
                     .arg(c.d_model)
                     .arg(c.context)
                     .arg(millions, 0, 'f', millions < 10 ? 2 : 0)
                     .arg(QString::fromStdString(opened.info.dtype));
  if (!opened.tokenizerProblem.empty()) text += tr(" \u00b7 no tokenizer: tokens are ids");
  return text;
}

}  // namespace attnlab
