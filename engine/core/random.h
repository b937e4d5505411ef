#pragma once
// One seeded generator type for the whole engine: results depend only on the seed (and thread count).
#include <cstdint>
#include <random>
#include <sstream>
#include <string>

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
  // The generator's whole state as text (the standard's 312 numbers), so a checkpoint can continue
  // the same stream. Every draw makes a fresh distribution, so the engine is all the state there is.
  std::string state() const {
    std::ostringstream out;
    out << gen_;
    return out.str();
  }
  // Returns false (and leaves the generator as it was) when `text` is not such a state.
  bool setState(const std::string& text) {
    std::istringstream in(text);
    std::mt19937_64 restored;
    if (!(in >> restored) || !(in >> std::ws).eof()) return false;
    gen_ = restored;
    return true;
  }

 private:
  std::mt19937_64 gen_;
};

}  // namespace attnlab
