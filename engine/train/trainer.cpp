#include "train/trainer.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/available_memory.h"
#include "core/threads.h"
#include "positional/length_limit.h"
#include "model/workspace.h"
#include "train/circuit_lr.h"
#include "train/length_eval.h"
#include "train/memory_estimate.h"
#include "train/qk_guard.h"

namespace attnlab {

namespace {
constexpr uint64_t kDataStream = 0x9e3779b97f4a7c15ull;   // training batches
constexpr uint64_t kEvalStream = 0xc2b2ae3d27d4eb4full;   // fixed validation batches
constexpr uint64_t kProbeStream = 0x165667b19e3779f9ull;  // the fixed probe example

// OpenMP threads split the work (heads, row ranges of the products: model/ops.cpp); Eigen's own
// product threading stays off, since its threads spin waiting for each other.
void useThreads(int threads) {
  setThreadCount(threads);
  Eigen::setNbThreads(1);
}

// Keeps freed activation buffers in the heap. By default glibc returns blocks above its mmap
// threshold to the system, and every step then faults fresh zeroed pages in again (about 4% of a
// default-preset step, measured with perf). 32 MiB is the largest threshold glibc accepts.
void keepActivationBuffersInHeap() {
  static const bool done = [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    return true;
  }();
  (void)done;
}

// Returns the name of the first parameter whose value is not finite, or "".
std::string firstNonFiniteValue(const ParamStore& params) {
  for (const auto& p : params.all())
    if (!p->value.allFinite()) return p->name;
  return {};
}
}  // namespace

Rng trainingDataRng(uint64_t seed) { return Rng(seed ^ kDataStream); }
Rng validationDataRng(uint64_t seed) { return Rng(seed ^ kEvalStream); }

Trainer::Trainer(const ExperimentConfig& config) : config_(config) {
  build();
  // The whole of training (weights, gradients, moments, activations) against what is available,
  // before the model is allocated: a batch or context a thousand times too large is refused here.
  MemoryEstimate need;
  if (std::string why = estimateMemory(config_, *task_, need, ThisMachine::mustFit); !why.empty()) throw ConfigError(why);
  activationsChecked_ = true;
  try {
    model_ = std::make_unique<Model>(config_.model, config_.train.seed);
  } catch (const std::exception& e) {
    throw ConfigError(e.what());
  }
  optimizer_ = std::make_unique<AdamW>(model_->params(), config_.train);
  qkHistory_.record(0, model_->params());
}

Trainer::Trainer(const ExperimentConfig& config, std::unique_ptr<Model> model, std::vector<TrainPoint> history)
    : config_(config), model_(std::move(model)), history_(std::move(history)) {
  build();
  optimizer_ = std::make_unique<AdamW>(model_->params(), config_.train);
  step_ = history_.empty() ? 0 : history_.back().step;
  if (history_.empty()) qkHistory_.record(0, model_->params());  // a fine-tune's start; a checkpoint restores its own
  for (int i = 0; i < step_; ++i) dataRng_.next();  // continue on a different stream than a fresh run
}

Trainer::~Trainer() = default;

bool Trainer::restoreTrainingState(int optimizerSteps, std::vector<Mat> m, std::vector<Mat> v, const std::string& dataStream) {
  Rng stream;
  if (!stream.setState(dataStream) || !optimizer_->restore(optimizerSteps, std::move(m), std::move(v))) return false;
  dataRng_ = stream;
  return true;
}

int trainingSequenceLength(const ExperimentConfig& config, const Task& task) {
  const int context = config.task.seq_len > 0 ? std::min(config.task.seq_len, config.model.context) : config.model.context;
  return task.sequenceLength(context);
}

void Trainer::build() {
  if (std::string why = validate(config_); !why.empty()) throw ConfigError(why);
  std::string error;
  task_ = makeTask(config_.task, error);
  if (!task_) throw ConfigError(error);
  const int vocab = task_->vocabulary().size();
  if (config_.model.vocab == 0) config_.model.vocab = vocab;
  if (config_.model.vocab != vocab)
    throw ConfigError("model.vocab is " + std::to_string(config_.model.vocab) + " but the task's vocabulary has " +
                      std::to_string(vocab) + " tokens");
  seqLen_ = trainingSequenceLength(config_, *task_);
  threads_ = ThreadGovernor(config_.train.threads);
  if (seqLen_ < std::max(2, task_->minSequenceLength()) || seqLen_ > config_.model.context)
    throw ConfigError("task '" + config_.task.name + "' cannot make sequences for a context of " +
                      std::to_string(config_.model.context) +
                      (config_.task.seq_len > 0 ? " and task.seq_len " + std::to_string(config_.task.seq_len) : ""));
  keepActivationBuffersInHeap();
  workspace_ = makeWorkspace();
  workspace_->keep_attention_maps = false;  // a training step reads no maps: variants that can, attend without them
  dataRng_ = trainingDataRng(config_.train.seed);
}

double Trainer::learningRate(int step) const {
  const TrainConfig& t = config_.train;
  if (step < t.warmup) return t.lr * (step + 1) / t.warmup;
  const double progress = t.steps > t.warmup ? std::min(1.0, double(step - t.warmup) / (t.steps - t.warmup)) : 1.0;
  const double minLr = t.lr * t.min_lr_ratio;
  return minLr + 0.5 * (t.lr - minLr) * (1.0 + std::cos(M_PI * progress));
}

// A model built elsewhere (an opened checkpoint, a fine-tune) holds its weights, gradients and
// moments already; what its first step adds is the activations, checked before they are allocated.
void Trainer::checkActivationsFit() {
  MemoryEstimate need;
  if (std::string why = estimateMemory(config_, *task_, need, ThisMachine::mayNotFit); !why.empty()) throw ConfigError(why);
  if (std::string why = activationMemoryRefusal(need, availableMemoryBytes()); !why.empty()) throw ConfigError(why);
  activationsChecked_ = true;
}

TrainPoint Trainer::trainStep() {
  if (!activationsChecked_) checkActivationsFit();
  const int threads = threads_.next();
  useThreads(threads);
  const auto start = std::chrono::steady_clock::now();
  const Batch batch = task_->sample(config_.train.batch, seqLen_, Split::Train, dataRng_);
  ParamStore& params = model_->params();
  params.zeroGrad();
  const double loss = model_->forward(*workspace_, batch.inputs.data(), batch.targets.data(), batch.B, batch.T);
  const int stepNumber = step_ + 1;
  if (!std::isfinite(loss)) {
    const std::string bad = firstNonFiniteValue(params);
    throw DivergenceError("training diverged at step " + std::to_string(stepNumber) + ": the loss is " +
                          (std::isnan(loss) ? "NaN" : "infinite") +
                          (bad.empty() ? " (the first non-finite tensor is the logits)" : " (the first non-finite tensor is " + bad + ")") +
                          "; weights kept from step " + std::to_string(step_));
  }
  model_->backward(*workspace_);
  // One pass over the gradients serves the finiteness check, the layer norms and the clipping.
  const auto& all = params.all();
  const std::vector<double> squaredNorms = gradientSquaredNorms(params);
  for (size_t i = 0; i < all.size(); ++i)
    if (!std::isfinite(squaredNorms[i]))
      throw DivergenceError("training diverged at step " + std::to_string(stepNumber) + ": the gradient of " + all[i]->name +
                            " is not finite; weights kept from step " + std::to_string(step_));

  TrainPoint point;
  point.step = stepNumber;
  point.loss = loss;
  for (int l = 0; l < config_.model.n_layers; ++l) {
    double sq = 0;
    for (size_t i = 0; i < all.size(); ++i)
      if (model_->belongsToLayer(all[i]->name, l)) sq += squaredNorms[i];
    point.layer_grad_norm.push_back(std::sqrt(sq));
  }
  point.layer_entropy = model_->layerEntropy(*workspace_);
  point.layer_max_score = layerMaxScores(*workspace_);
  point.grad_norm = clipGradients(params, config_.train.grad_clip, gradientNorm(squaredNorms));
  point.lr = learningRate(step_);
  if (circuitLrActive(config_.train)) {
    const std::vector<float> ratios = circuitLrRatios(params, config_.train, step_);
    optimizer_->step(point.lr, &ratios);
  } else {
    optimizer_->step(point.lr);
  }
  step_ = stepNumber;
  qkHistory_.record(step_, params);
  point.qk_guard_switched = layersCrossing(config_.model, point.layer_max_score, config_.train.qk_guard);
  if (!point.qk_guard_switched.empty()) {  // the switched layers run qk_norm from the next step (train/qk_guard.h)
    config_.model = withQkNorm(config_.model, point.qk_guard_switched);
    model_ = switchToQkNorm(*model_, config_.model, point.qk_guard_switched, static_cast<float>(config_.train.qk_guard),
                            config_.train, optimizer_);
  }

  point.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  point.tokens_per_second = point.seconds > 0 ? batch.B * batch.T / point.seconds : 0;
  threads_.record(threads, point.seconds);
  const int every = config_.train.eval_every;
  if ((every > 0 && step_ % every == 0) || finished()) {
    const EvalResult eval = evaluate();
    point.val_loss = eval.loss;
    point.accuracy = eval.accuracy;
    if (diagnose_) point.layer_diagnostics = diagnose_(*model_);
  }
  history_.push_back(point);
  return point;
}

EvalResult Trainer::evaluate(int batches) { return evaluateAtLength(*this, seqLen_, batches); }

EvalResult evaluateAtLength(Trainer& trainer, int seqLen, int batches) {
  return evaluateAtLength(trainer.config(), trainer.task(), trainer.model(), trainer.sequenceLength(), seqLen, batches);
}

EvalResult evaluateAtLength(const ExperimentConfig& config, const Task& task, const Model& model, int trained, int seqLen,
                            int batches) {
  useThreads(config.train.threads);
  if (batches <= 0) batches = config.train.eval_batches;
  if (seqLen < std::max(2, task.minSequenceLength()))
    throw ConfigError("task '" + config.task.name + "' cannot make sequences of " + std::to_string(seqLen) + " tokens");
  if (std::string why = lengthRefusal(model.config(), seqLen); !why.empty()) throw ConfigError(why);
  const int B = config.train.batch;
  const long perForward = static_cast<long>(B) * trained * trained / (static_cast<long>(seqLen) * seqLen);
  const int rowsPerForward = static_cast<int>(std::clamp<long>(perForward, 1, B));  // B at the training length
  Rng rng = validationDataRng(config.train.seed);
  auto ws = makeWorkspace();
  EvalResult r;
  double lossSum = 0;
  long answers = 0, correct = 0, sequences = 0, exact = 0;
  for (int n = 0; n < batches; ++n) {
    const Batch batch = task.sample(B, seqLen, Split::Validation, rng);
    const int T = batch.T;
    for (int b0 = 0; b0 < batch.B; b0 += rowsPerForward) {
      const int rows = std::min(rowsPerForward, batch.B - b0);
      const int* targets = batch.targets.data() + static_cast<size_t>(b0) * T;
      // Validation reports the task loss alone: the retention gate's sparsity term is a training pressure.
      model.forward(*ws, batch.inputs.data() + static_cast<size_t>(b0) * T, targets, rows, T);
      lossSum += ws->cross_entropy * ws->counted;
      r.tokens += ws->counted;
      const Mat& logits = workspaceLogits(*ws);
      for (int b = 0; b < rows; ++b) {
        bool all = true, any = false;
        for (int t = 0; t < T; ++t) {
          const int row = b * T + t, target = targets[row];
          if (target < 0) continue;
          Eigen::Index argmax;
          logits.row(row).maxCoeff(&argmax);
          const bool ok = argmax == target;
          correct += ok;
          ++answers;
          all = all && ok;
          any = true;
        }
        if (any) {
          ++sequences;
          exact += all;
        }
      }
    }
  }
  r.loss = r.tokens ? lossSum / r.tokens : 0.0;
  r.perplexity = std::exp(r.loss);
  if (task.hasAnswers() && answers) {
    r.accuracy = double(correct) / answers;
    r.exact_match = sequences ? double(exact) / sequences : 0.0;
  }
  return r;
}

Trace traceModel(const Model& model, const Vocabulary& vocabulary, const std::vector<int>& tokens) {
  Trace trace;
  if (tokens.empty()) return trace;
  const int T = std::min<int>(tokens.size(), model.config().context);
  auto ws = makeWorkspace();
  ws->inference = true;
  std::vector<int> targets(T, -1);
  model.forward(*ws, tokens.data(), targets.data(), 1, T, &trace);
  for (int t = 0; t < T; ++t) trace.labels.push_back(vocabulary.token(tokens[t]));
  return trace;
}

Trace Trainer::trace(const std::vector<int>& tokens) const {
  useThreads(threads_.current());
  return traceModel(*model_, task_->vocabulary(), tokens);
}

std::vector<int> Trainer::probeTokens() const {
  Rng rng(config_.train.seed ^ kProbeStream);
  return task_->probe(seqLen_, rng);
}

}  // namespace attnlab
