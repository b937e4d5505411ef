// save_loop: saves two fixed experiments into one folder, alternately, until it is killed
// (test_save_kills kills it with SIGKILL at random moments).
//
//   save_loop prepare WORK          trains two tiny runs and writes WORK/src-a, WORK/src-b, and
//                                   WORK/ref-a, WORK/ref-b: what saving each loaded run writes
//   save_loop engine WORK TARGET    saveCheckpoint, as attnlab-cli train saves
//   save_loop session WORK TARGET   TrainingSession::save on the worker thread, as the app saves:
//                                   File > Save (SaveKind::User) and the autosave, in turn
//   save_loop engine-forks WORK TARGET   the engine loop in a child forked for each line read:
//                                   prints "child PID", then the child's lines, then "dead" when
//                                   it was killed (so one start serves many kills)
//   save_loop engine-once | session-once WORK TARGET   one save of WORK/src-a (test_save_failures)
//
// The loops print "ready" once both runs are loaded and "saved" after each save that succeeded;
// a failed save prints the reason and exits with 3.
#include <sys/wait.h>
#include <unistd.h>

#include <QCoreApplication>
#include <QEventLoop>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "io/checkpoint.h"
#include "train/trainer.h"
#include "training_session.h"

using namespace attnlab;

namespace {

ExperimentConfig tinyConfig() {
  ExperimentConfig c;
  c.task.name = "copy";
  c.model.d_model = 16;
  c.model.n_layers = 2;
  c.model.n_heads = 2;
  c.model.d_ff = 32;
  c.model.context = 16;
  c.train.steps = 200;
  c.train.batch = 4;
  c.train.warmup = 20;
  c.train.eval_every = 50;
  return c;
}

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "save_loop: %s\n", why.c_str());
  std::exit(3);
}

std::unique_ptr<Trainer> load(const std::string& dir) {
  LoadedCheckpoint loaded;
  if (std::string why = loadCheckpoint(dir, loaded); !why.empty()) die(why);
  return std::move(loaded.trainer);
}

void say(const char* line) {
  std::printf("%s\n", line);
  std::fflush(stdout);
}

int prepare(const std::string& work) {
  for (const auto& [name, steps] : {std::pair{"a", 2}, std::pair{"b", 5}}) {
    Trainer trainer(tinyConfig());
    for (int i = 0; i < steps; ++i) trainer.trainStep();
    const std::string src = work + "/src-" + name;
    if (std::string why = saveCheckpoint(src, trainer); !why.empty()) die(why);
    if (std::string why = saveCheckpoint(work + "/ref-" + name, *load(src)); !why.empty()) die(why);
  }
  return 0;
}

int engineLoop(const std::string& work, const std::string& target, bool once) {
  const std::unique_ptr<Trainer> runs[2] = {load(work + "/src-a"), load(work + "/src-b")};
  say("ready");
  for (int i = 0;; ++i) {
    if (std::string why = saveCheckpoint(target, *runs[i % 2]); !why.empty()) die(why);
    say("saved");
    if (once) return 0;
  }
}

// Single-threaded until the fork: the child only saves (no engine compute, no threads).
int engineForks(const std::string& work, const std::string& target) {
  const std::unique_ptr<Trainer> runs[2] = {load(work + "/src-a"), load(work + "/src-b")};
  say("ready");
  for (char line[64]; std::fgets(line, sizeof line, stdin);) {
    const pid_t child = ::fork();
    if (child < 0) die("cannot fork");
    if (child == 0) {
      for (int i = 0;; ++i) {
        if (std::string why = saveCheckpoint(target, *runs[i % 2]); !why.empty()) die(why);
        say("saved");
      }
    }
    std::printf("child %d\n", static_cast<int>(child));
    std::fflush(stdout);
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFSIGNALED(status)) die("the saving child ended by itself");
    say("dead");
  }
  return 0;
}

int sessionLoop(const std::string& work, const std::string& target, bool once) {
  TrainingSession sessions[2];
  sessions[0].open(load(work + "/src-a"));
  sessions[1].open(load(work + "/src-b"));
  say("ready");
  const QString dir = QString::fromStdString(target);
  for (int i = 0;; ++i) {
    TrainingSession& session = sessions[i % 2];
    QEventLoop wait;
    QString error;
    bool finished = false;
    const auto done = QObject::connect(&session, &TrainingSession::saved, &wait, [&](const QString&, int, const QString& why) {
      error = why;
      finished = true;
      wait.quit();
    });
    session.save(dir, (i / 2) % 2 == 0 ? TrainingSession::SaveKind::User : TrainingSession::SaveKind::Autosave);
    if (!finished) wait.exec();
    QObject::disconnect(done);
    if (!error.isEmpty()) die(error.toStdString());
    say("saved");
    if (once) return 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  const std::string mode = argc > 2 ? argv[1] : "";
  if (mode == "prepare") return prepare(argv[2]);
  if (argc > 3 && (mode == "engine" || mode == "engine-once")) return engineLoop(argv[2], argv[3], mode == "engine-once");
  if (argc > 3 && mode == "engine-forks") return engineForks(argv[2], argv[3]);
  if (argc > 3 && (mode == "session" || mode == "session-once")) return sessionLoop(argv[2], argv[3], mode == "session-once");
  die("usage: save_loop prepare WORK | engine[-once] WORK TARGET | session[-once] WORK TARGET");
}
