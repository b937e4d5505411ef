#include "kv/row_store.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnlab {

namespace {
// The largest code of a symmetric format: codes run over [-limit, limit].
int codeLimit(KvQuant format) { return format == KvQuant::int8 ? 127 : 7; }
}  // namespace

bool parseKvQuant(const std::string& name, KvQuant& out) {
  for (KvQuant q : {KvQuant::fp32, KvQuant::int8, KvQuant::int4})
    if (name == kvQuantName(q)) {
      out = q;
      return true;
    }
  return false;
}

const char* kvQuantName(KvQuant quant) {
  switch (quant) {
    case KvQuant::int8: return "int8";
    case KvQuant::int4: return "int4";
    case KvQuant::fp32: break;
  }
  return "fp32";
}

size_t RowStore::rowBytes(KvQuant format, int d) {
  const size_t n = static_cast<size_t>(std::max(d, 0));
  switch (format) {
    case KvQuant::int8: return sizeof(float) + n;
    case KvQuant::int4: return sizeof(float) + (n + 1) / 2;
    case KvQuant::fp32: break;
  }
  return sizeof(float) * n;
}

void RowStore::append(const float* row) {
  const size_t at = bytes_.size();
  bytes_.resize(at + rowBytes_);
  uint8_t* out = bytes_.data() + at;
  if (format_ == KvQuant::fp32) {
    std::memcpy(out, row, rowBytes_);
    return;
  }
  const int limit = codeLimit(format_);
  float largest = 0;
  for (int c = 0; c < d_; ++c) largest = std::max(largest, std::abs(row[c]));
  const float scale = largest / limit;  // 0 for an all-zero row: every code is then 0
  std::memcpy(out, &scale, sizeof scale);
  uint8_t* codes = out + sizeof scale;
  std::fill(codes, out + rowBytes_, uint8_t{0});
  for (int c = 0; c < d_; ++c) {
    const int code = scale > 0 ? std::clamp(static_cast<int>(std::lround(row[c] / scale)), -limit, limit) : 0;
    if (format_ == KvQuant::int8) codes[c] = static_cast<uint8_t>(static_cast<int8_t>(code));
    else codes[c / 2] |= static_cast<uint8_t>((code + 8) << (4 * (c % 2)));  // nibble 1..15 holds code + 8
  }
}

void RowStore::compact(const std::vector<char>& keep) {
  size_t kept = 0;
  for (size_t i = 0; i < keep.size();) {
    if (!keep[i]) {
      ++i;
      continue;
    }
    size_t end = i;  // a run of kept rows [i, end) moves as one block (a decoding step drops one row)
    while (end < keep.size() && keep[end]) ++end;
    if (kept != i) std::memmove(bytes_.data() + kept * rowBytes_, bytes_.data() + i * rowBytes_, (end - i) * rowBytes_);
    kept += end - i;
    i = end;
  }
  bytes_.resize(kept * rowBytes_);
}

const float* RowStore::read(std::vector<float>& scratch) const {
  if (format_ == KvQuant::fp32) return reinterpret_cast<const float*>(bytes_.data());
  const int n = rows();
  scratch.resize(static_cast<size_t>(n) * d_);
  for (int r = 0; r < n; ++r) {
    const uint8_t* in = bytes_.data() + static_cast<size_t>(r) * rowBytes_;
    float scale = 0;
    std::memcpy(&scale, in, sizeof scale);
    const uint8_t* codes = in + sizeof scale;
    float* out = scratch.data() + static_cast<size_t>(r) * d_;
    for (int c = 0; c < d_; ++c) {
      const int code = format_ == KvQuant::int8 ? static_cast<int8_t>(codes[c]) : ((codes[c / 2] >> (4 * (c % 2))) & 0xF) - 8;
      out[c] = scale * static_cast<float>(code);  // x' = s * code
    }
  }
  return scratch.data();
}

}  // namespace attnlab
