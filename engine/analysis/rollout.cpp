#include "analysis/rollout.h"

#include <algorithm>
#include <sstream>

#include "analysis/analysis.h"

namespace attnlab {

Mat attentionRollout(const Trace& trace) {
  const Eigen::Index T = static_cast<Eigen::Index>(trace.tokens.size());
  Mat rollout = Mat::Identity(T, T);
  for (const LayerTrace& layer : trace.layers) {
    if (layer.heads.empty()) continue;
    Mat mean = Mat::Zero(T, T);
    for (const HeadTrace& h : layer.heads) mean += h.weights / static_cast<float>(layer.heads.size());
    rollout = ((mean + Mat::Identity(T, T)) * 0.5f) * rollout;
  }
  return rollout;
}

namespace {

class RolloutAnalysis : public Analysis {
 public:
  Json run(Trainer& trainer, const AnalysisOptions&) const override {
    const Trace trace = trainer.trace(trainer.probeTokens());
    const Mat r = attentionRollout(trace);
    Json rows = Json::array();
    for (Eigen::Index i = 0; i < r.rows(); ++i) rows.push_back(std::vector<float>(r.row(i).data(), r.row(i).data() + r.cols()));
    return {{"input", "probe"}, {"tokens", trace.tokens}, {"labels", trace.labels}, {"rollout", std::move(rows)}};
  }

  std::string describe(const Json& r) const override {
    // For the last position: the three inputs it draws on most.
    const auto& last = r["rollout"].back();
    std::vector<std::pair<float, int>> weights;
    for (size_t j = 0; j < last.size(); ++j) weights.push_back({last[j].get<float>(), static_cast<int>(j)});
    std::sort(weights.rbegin(), weights.rend());
    std::ostringstream out;
    out << "probe of " << last.size() << " tokens; the last position draws most on:";
    for (size_t k = 0; k < std::min<size_t>(3, weights.size()); ++k)
      out << " " << r["labels"][weights[k].second].get<std::string>() << "@" << weights[k].second << " (" << weights[k].first << ")";
    return out.str() + "\n";
  }
};

ATTNLAB_REGISTER(AnalysisRegistry, "rollout", "attention rollout prod_l (mean_h A_l + I)/2 on the probe",
                 [] { return std::make_unique<RolloutAnalysis>(); });

}  // namespace
}  // namespace attnlab
