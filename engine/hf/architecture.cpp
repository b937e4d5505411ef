#include "hf/architecture.h"

namespace attnlab::hf {

std::vector<int> rotaryOrder(int heads, int headDim, int rotated) {
  std::vector<int> order;
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < headDim; ++i) {
      const int m = i / 2;
      order.push_back(h * headDim + (i >= rotated ? i : (i % 2 == 0 ? m : m + rotated / 2)));
    }
  return order;
}

int ConfigReader::positive(const char* key) {
  if (!j_.contains(key)) {
    fail(std::string("has no ") + key);
    return 1;
  }
  return positiveOr(key, 1);
}

int ConfigReader::positiveOr(const char* key, int fallback) {
  if (!j_.contains(key) || j_[key].is_null()) return fallback;
  const Json& v = j_[key];
  if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > (1 << 30)) {
    fail(std::string(key) + " must be a positive integer up to 2^30, got " + v.dump());
    return fallback;
  }
  return static_cast<int>(v.get<int64_t>());
}

double ConfigReader::number(const char* key, double fallback) {
  if (!j_.contains(key) || j_[key].is_null()) return fallback;
  if (!j_[key].is_number()) {
    fail(std::string(key) + " must be a number, got " + j_[key].dump());
    return fallback;
  }
  return j_[key].get<double>();
}

bool ConfigReader::flag(const char* key, bool fallback) {
  if (!j_.contains(key) || j_[key].is_null()) return fallback;
  if (!j_[key].is_boolean()) {
    fail(std::string(key) + " must be true or false, got " + j_[key].dump());
    return fallback;
  }
  return j_[key].get<bool>();
}

std::string ConfigReader::text(const char* key, const std::string& fallback) {
  if (!j_.contains(key) || j_[key].is_null()) return fallback;
  if (!j_[key].is_string()) {
    fail(std::string(key) + " must be a string, got " + j_[key].dump());
    return fallback;
  }
  return j_[key].get<std::string>();
}

void copyAs(const Mat& stored, Mat& value) { value = Eigen::Map<const Mat>(stored.data(), value.rows(), value.cols()); }

void transposed(const Mat& stored, Mat& value) { value = stored.transpose(); }

std::function<void(const Mat&, Mat&)> pickRows(std::vector<int> rows) {
  return [rows = std::move(rows)](const Mat& stored, Mat& value) {
    for (size_t i = 0; i < rows.size(); ++i) value.row(static_cast<Eigen::Index>(i)) = stored.row(rows[i]);
  };
}

std::function<void(const Mat&, Mat&)> pickCols(std::vector<int> cols) {
  return [cols = std::move(cols)](const Mat& stored, Mat& value) {
    for (size_t i = 0; i < cols.size(); ++i) value(0, static_cast<Eigen::Index>(i)) = stored(0, cols[i]);
  };
}

}  // namespace attnlab::hf
