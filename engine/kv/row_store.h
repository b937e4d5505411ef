#pragma once
// One cached tensor (keys or values) of one KV head: its rows in a storage format (quantised KV). fp32 keeps
// each row as d floats; int8 and int4 quantise each row (each token) on its own, symmetric around 0
// with one float scale s = max|x| / 127 (or / 7): x ~ s * round(x / s). A row is held as its bytes,
// [scale, codes] for the quantised formats (int4: two codes a byte, low nibble first), so what
// bytes() reports is exactly the memory the rows occupy: rows x rowBytes(format, d).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnlab {

enum class KvQuant : uint8_t { fp32, int8, int4 };

// "fp32", "int8" or "int4" -> format; false for anything else.
bool parseKvQuant(const std::string& name, KvQuant& out);
const char* kvQuantName(KvQuant quant);
inline constexpr const char* kKvQuantNames = "fp32, int8, int4";

class RowStore {
 public:
  RowStore() = default;
  RowStore(KvQuant format, int d) : format_(format), d_(d), rowBytes_(rowBytes(format, d)) {}

  // The bytes one row of d entries takes in `format`.
  static size_t rowBytes(KvQuant format, int d);

  void append(const float* row);
  // Keeps the rows with keep[i] != 0, in order.
  void compact(const std::vector<char>& keep);
  void clear() { bytes_.clear(); }
  int rows() const { return rowBytes_ ? static_cast<int>(bytes_.size() / rowBytes_) : 0; }
  size_t bytes() const { return bytes_.size(); }
  KvQuant format() const { return format_; }
  size_t rowBytes() const { return rowBytes_; }  // 0 until formatted

  // The rows as floats [rows, d]: fp32 returns its own storage, the quantised formats decode into
  // `scratch` (the values attention reads are then exactly the dequantised ones).
  const float* read(std::vector<float>& scratch) const;

 private:
  KvQuant format_ = KvQuant::fp32;
  int d_ = 0;
  size_t rowBytes_ = 0;
  std::vector<uint8_t> bytes_;
};

}  // namespace attnlab
