#include "train_report.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "format.h"
#include "train/qk_guard.h"

namespace attnlab::cli {

TrainReport::TrainReport(int totalSteps, bool json, bool quiet, int startStep)
    : totalSteps_(totalSteps), startStep_(startStep), json_(json), quiet_(quiet), showBar_(!json && !quiet && isatty(STDERR_FILENO)) {}

double TrainReport::tokensPerSecond() const { return stepSeconds_ > 0 ? tokens_ / stepSeconds_ : 0.0; }

double TrainReport::elapsedSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string TrainReport::statusLine() const {
  const double perStep = last_.step > startStep_ ? elapsedSeconds() / (last_.step - startStep_) : 0.0;
  return "loss " + fixed(last_.loss, 4) + "  val " + fixed(lastEvaluated_.val_loss, 4) + "  acc " +
         percent(lastEvaluated_.accuracy) + "  " + compactCount(tokensPerSecond()) + " tok/s  ETA " +
         duration(perStep * (totalSteps_ - last_.step));
}

void TrainReport::onStep(const TrainPoint& point, double qkGuard) {
  tokens_ += point.tokens_per_second * point.seconds;
  stepSeconds_ += point.seconds;
  last_ = point;
  const bool evaluated = std::isfinite(point.val_loss);
  if (evaluated) lastEvaluated_ = point;

  if (evaluated && !quiet_) {
    if (json_) {
      const Json event = {{"event", "eval"},
                          {"step", point.step},
                          {"total", totalSteps_},
                          {"loss", numberOrNull(point.loss)},
                          {"val_loss", numberOrNull(point.val_loss)},
                          {"accuracy", numberOrNull(point.accuracy)},
                          {"lr", point.lr},
                          {"grad_norm", numberOrNull(point.grad_norm)},
                          {"tokens_per_second", tokensPerSecond()},
                          {"seconds", elapsedSeconds()}};
      std::cout << event.dump() << std::endl;
    } else {
      bar_.clear();
      char head[32];
      std::snprintf(head, sizeof(head), "step %6d/%d", point.step, totalSteps_);
      std::cout << head << "  loss " << fixed(point.loss, 4) << "  val " << fixed(point.val_loss, 4) << "  acc "
                << percent(point.accuracy) << "  " << compactCount(tokensPerSecond()) << " tok/s" << std::endl;
    }
  }
  for (int layer : point.qk_guard_switched) {
    const double score = switchScore(point, layer);
    if (json_) {
      std::cout << Json{{"event", "qk_guard"}, {"step", point.step}, {"layer", layer}, {"score", score}, {"threshold", qkGuard}}.dump()
                << std::endl;
    } else {
      bar_.clear();
      std::cout << qkGuardMessage(point.step, layer, score, qkGuard) << std::endl;
    }
  }
  if (showBar_) bar_.draw(point.step, totalSteps_, statusLine(), point.step == totalSteps_);
}

void TrainReport::onDiverged(const std::string& reason, int lastGoodStep) {
  bar_.clear();
  if (json_)
    std::cout << Json{{"event", "diverged"}, {"step", lastGoodStep + 1}, {"reason", reason}}.dump() << std::endl;
}

void TrainReport::onFinished(const EvalResult& eval, const std::string& out, bool interrupted) {
  bar_.clear();
  const double seconds = elapsedSeconds();
  if (json_) {
    const Json final = {{"event", "final"},
                        {"step", last_.step},
                        {"loss", numberOrNull(last_.loss)},
                        {"val_loss", numberOrNull(eval.loss)},
                        {"perplexity", numberOrNull(eval.perplexity)},
                        {"accuracy", numberOrNull(eval.accuracy)},
                        {"exact_match", numberOrNull(eval.exact_match)},
                        {"tokens_per_second", tokensPerSecond()},
                        {"seconds", seconds},
                        {"out", out},
                        {"interrupted", interrupted}};
    std::cout << final.dump() << std::endl;
    return;
  }
  if (interrupted)
    std::cout << "stopped by Ctrl-C at step " << last_.step << "/" << totalSteps_ << " after " << duration(seconds)
              << "\n";
  else
    std::cout << "trained " << last_.step << " steps in " << duration(seconds) << "\n";
  std::cout << "loss " << fixed(last_.loss, 4) << "  val loss " << fixed(eval.loss, 4) << "  perplexity "
            << fixed(eval.perplexity, 3) << "  accuracy " << percent(eval.accuracy) << "  exact match "
            << percent(eval.exact_match) << "  " << compactCount(tokensPerSecond()) << " tok/s\n"
            << "saved to " << out << std::endl;
}

}  // namespace attnlab::cli
