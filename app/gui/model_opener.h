#pragma once
// Opening a Hugging Face model folder (engine/hf) for the main window: the load runs on a worker
// (BackgroundJob), with a progress dialog and Cancel when the weight files are 0.5 GB or more; the
// folder's tokenizer becomes the vocabulary and a short sentence the first probe. Nothing reaches
// the session before the load succeeds, so a refusal leaves the current experiment as it was.
#include <QObject>
#include <QPointer>
#include <QString>
#include <atomic>
#include <memory>
#include <vector>

#include "tokenizer/vocabulary.h"
#include "hf/hf_model.h"

class QProgressDialog;
class QWidget;

namespace attnlab {

class BackgroundJob;

// What a successful load hands over.
struct OpenedHfModel {
  std::unique_ptr<Model> model;
  hf::HfModelInfo info;
  std::shared_ptr<const Vocabulary> vocabulary;
  std::string tokenizerProblem;  // "" when the folder's tokenizer loaded
  std::vector<int> probe;        // the first probe: kProbeText through the tokenizer, else a few ids
};

class ModelOpener : public QObject {
  Q_OBJECT
 public:
  static constexpr uint64_t kProgressBytes = 512ull << 20;  // loads this large show progress
  static const char* const kProbeText;

  explicit ModelOpener(QWidget* window);
  ~ModelOpener() override;

  // Starts loading `dir`; opened() or refused() follows on the UI thread. A load already running
  // is cancelled first.
  void open(const QString& dir);
  void cancel();
  bool busy() const;
  void waitForIdle();  // for tests

  // "ORG/NAME" of a Hugging Face cache snapshot, else the folder's name: what captions call it.
  static QString name(const OpenedHfModel& opened);
  // One line describing an opened model, for the window's experiment label.
  static QString describe(const OpenedHfModel& opened);

 signals:
  void opened(std::shared_ptr<attnlab::OpenedHfModel> model);
  void refused(const QString& dir, const QString& message);  // also a cancelled load ("cancelled")

 private:
  void showProgress(double fraction);
  void finished();

  QWidget* window_;
  BackgroundJob* job_;
  QPointer<QProgressDialog> progress_;
  std::shared_ptr<std::atomic<bool>> cancelled_;
  std::shared_ptr<std::atomic<int>> permille_;
};

}  // namespace attnlab
