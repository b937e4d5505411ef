#include "data/corpus_stats.h"

#include <cmath>
#include <vector>

namespace attnlab {

double unigramEntropy(const Task& task, int samples, int seqLen, Rng& rng) {
  const Batch batch = task.sample(samples, seqLen, Split::Train, rng);
  std::vector<long> counts(task.vocabulary().size(), 0);
  long total = 0;
  for (const int target : batch.targets) {
    if (target < 0) continue;
    ++counts[target];
    ++total;
  }
  double entropy = 0;
  for (const long c : counts) {
    if (c == 0) continue;
    const double p = static_cast<double>(c) / total;
    entropy -= p * std::log(p);
  }
  return entropy;
}

}  // namespace attnlab
