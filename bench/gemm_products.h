#pragma once
// attnlab-bench --gemm: the engine's hot matrix products at the shapes its workloads run, timed
// with Eigen's product and with each micro-kernel of core/gemm.h (one thread), so the choice
// between them rests on a measurement. One JSON line per shape.
#include <nlohmann/json.hpp>
#include <vector>

namespace attnlab::bench {

std::vector<nlohmann::json> timeGemmProducts(double secondsPerCase);

}  // namespace attnlab::bench
