#pragma once
// One seeded generator type for the whole engine: results depend only on the seed (and thread count).
#include <cstdint>
#include <random>

namespace attnlab {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) : gen_(seed) {}
  // Uniform integer in [lo, hi] (both inclusive).
  int uniformInt(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen_); }
  double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(gen_); }
  float normal(float mean = 0.f, float stddev = 1.f) { return std::normal_distribution<float>(mean, stddev)(gen_); }
  bool bernoulli(double p) { return uniform() < p; }
  uint64_t next() { return gen_(); }
  std::mt19937_64& engine() { return gen_; }

 private:
  std::mt19937_64 gen_;
};

}  // namespace attnlab
