#include "hf/tensor_file.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/json_limits.h"

namespace attnlab::hf {

namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // real headers are kilobytes; this bounds a bad file's claim

// Bytes per element of the dtypes the format defines (0: unknown).
uint64_t dtypeSize(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

std::string shown(const Json& j) {
  std::string s = j.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf / NaN
  } else if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mantissa <<= 1;
      } while (!(mantissa & 0x400));
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mantissa & 0x3ff) << 13;
    }
  } else {
    bits = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
  }
  return std::bit_cast<float>(bits);
}

// One header entry checked against the data section [0, dataSize).
std::string parseEntry(const std::string& name, const Json& v, uint64_t dataStart, uint64_t dataSize, TensorEntry& e) {
  if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
    return "tensor " + name + " has a malformed entry " + shown(v) + " (expected dtype, shape, data_offsets)";
  if (!v["dtype"].is_string() || dtypeSize(v["dtype"].get<std::string>()) == 0)
    return "tensor " + name + " has an unknown dtype " + shown(v["dtype"]);
  e.name = name;
  e.dtype = v["dtype"].get<std::string>();
  uint64_t count = 1;
  if (!v["shape"].is_array()) return "tensor " + name + " has a malformed shape " + shown(v["shape"]);
  for (const Json& d : v["shape"]) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > (1ull << 40))
      return "tensor " + name + " has a malformed shape " + shown(v["shape"]) + " (expected non-negative integers)";
    e.shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    if (__builtin_mul_overflow(count, d.get<uint64_t>(), &count))
      return "tensor " + name + " has a shape " + shown(v["shape"]) + " whose size overflows";
  }
  const Json& o = v["data_offsets"];
  if (!o.is_array() || o.size() != 2 || !o[0].is_number_unsigned() || !o[1].is_number_unsigned())
    return "tensor " + name + " has malformed data_offsets " + shown(o) + " (expected [begin, end])";
  const uint64_t begin = o[0].get<uint64_t>(), end = o[1].get<uint64_t>();
  const std::string range = "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
  if (begin > end) return "tensor " + name + " has reversed data_offsets " + range;
  if (end > dataSize)
    return "tensor " + name + " has data_offsets " + range + " beyond the " + std::to_string(dataSize) +
           "-byte data section (file truncated?)";
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, dtypeSize(e.dtype), &bytes) || bytes != end - begin)
    return "tensor " + name + " spans " + std::to_string(end - begin) + " bytes but its shape " + shown(v["shape"]) +
           " in " + e.dtype + " needs " + std::to_string(count) + " x " + std::to_string(dtypeSize(e.dtype));
  e.offset = dataStart + begin;
  e.bytes = bytes;
  return {};
}

}  // namespace

uint64_t TensorEntry::elements() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

std::string readTensorHeader(const std::string& path, std::vector<TensorEntry>& out) {
  const std::string where = path + ": ";
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return where + "not found or not a regular file";
  const uint64_t fileSize = fs::file_size(path, ec);
  if (ec) return where + "cannot read its size (" + ec.message() + ")";
  std::ifstream in(path, std::ios::binary);
  if (!in) return where + "cannot open (" + lastSystemError() + ")";
  if (fileSize < 8) return where + "too short to be a safetensors file (" + std::to_string(fileSize) + " bytes)";
  unsigned char lengthBytes[8];
  in.read(reinterpret_cast<char*>(lengthBytes), 8);
  uint64_t headerSize = 0;
  for (int i = 0; i < 8; ++i) headerSize |= uint64_t(lengthBytes[i]) << (8 * i);
  if (headerSize > fileSize - 8)  // fileSize >= 8 here, so no wrap; covers lengths near 2^64
    return where + "header length " + std::to_string(headerSize) + " exceeds the file size " + std::to_string(fileSize) +
           " (truncated, or not a safetensors file)";
  if (headerSize > kMaxHeaderBytes) return where + "header length " + std::to_string(headerSize) + " exceeds the 100 MB limit";
  std::string text(headerSize, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(headerSize))) return where + "cannot read the header";
  if (std::string why = checkJsonDepth(text); !why.empty()) return where + "header " + why;
  Json header;
  try {
    header = Json::parse(text);
  } catch (const Json::exception& e) {  // a syntax error, or a number too large for a double (406)
    const std::string why = e.what();
    return where + "header is not valid JSON (" + why.substr(why.find("] ") + 2) + ")";
  }
  if (!header.is_object()) return where + "header is not a JSON object";
  const uint64_t dataStart = 8 + headerSize;
  for (const auto& [name, v] : header.items()) {
    if (name == "__metadata__") continue;
    TensorEntry e;
    e.path = path;
    if (std::string why = parseEntry(name, v, dataStart, fileSize - dataStart, e); !why.empty()) return where + why;
    out.push_back(std::move(e));
  }
  return {};
}

std::string readShardIndex(const std::string& dir, std::vector<std::string>& files) {
  const std::string path = (fs::path(dir) / "model.safetensors.index.json").string();
  std::string text;
  if (std::string why = readWholeFile(path, text); !why.empty()) return why;
  if (std::string why = checkJsonDepth(text); !why.empty()) return path + ": " + why;
  Json index;
  try {
    index = Json::parse(text);
  } catch (const Json::exception&) {  // a syntax error, or a number too large for a double (406)
    return path + ": not valid JSON";
  }
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
    return path + ": has no weight_map object";
  for (const auto& [tensor, file] : index["weight_map"].items()) {
    if (!file.is_string()) return path + ": weight_map entry " + tensor + " is not a file name";
    const fs::path name(file.get<std::string>());
    bool escapes = name.empty() || name.is_absolute() || name.has_root_name();
    for (const auto& part : name) escapes = escapes || part == "..";
    if (escapes) return path + ": shard " + shown(file) + " is outside the model folder (refused)";
    if (std::find(files.begin(), files.end(), name.string()) == files.end()) files.push_back(name.string());
  }
  if (files.empty()) return path + ": weight_map names no shard";
  for (const auto& f : files)
    if (std::error_code ec; !fs::is_regular_file(fs::path(dir) / f, ec)) return path + ": shard " + f + " is missing";
  return {};
}

std::string readTensorFloats(const TensorEntry& e, float* out) {
  const std::string where = e.path + ": tensor " + e.name + " ";
  const uint64_t n = e.elements();
  const uint64_t size = e.dtype == "F32" ? 4 : e.dtype == "F16" || e.dtype == "BF16" ? 2 : e.dtype == "F64" ? 8 : 0;
  if (size == 0) return where + "has dtype " + e.dtype + "; weights must be F32, F16 or BF16";
  std::ifstream in(e.path, std::ios::binary);
  if (!in) return e.path + ": cannot open (" + lastSystemError() + ")";
  in.seekg(static_cast<std::streamoff>(e.offset));
  // In chunks: a staging buffer as large as the tensor would add its size to the load's peak memory.
  constexpr uint64_t kChunk = 1 << 20;  // elements
  std::vector<char> raw(std::min(n, kChunk) * size);
  for (uint64_t first = 0; first < n; first += kChunk) {
    const uint64_t count = std::min(kChunk, n - first);
    if (!in.read(raw.data(), static_cast<std::streamsize>(count * size))) return where + "cannot be read (file truncated?)";
    float* to = out + first;
    if (size == 4) {
      std::memcpy(to, raw.data(), count * 4);
    } else if (size == 2) {
      const bool brain = e.dtype == "BF16";
      for (uint64_t i = 0; i < count; ++i) {
        uint16_t h;
        std::memcpy(&h, raw.data() + 2 * i, 2);
        to[i] = brain ? std::bit_cast<float>(static_cast<uint32_t>(h) << 16) : halfToFloat(h);  // BF16 is float32's top half
      }
    } else {
      for (uint64_t i = 0; i < count; ++i) {
        double d;
        std::memcpy(&d, raw.data() + 8 * i, 8);
        to[i] = static_cast<float>(d);
      }
    }
  }
  for (uint64_t i = 0; i < n; ++i)
    if (!std::isfinite(out[i])) return where + "has " + (std::isnan(out[i]) ? "NaN" : "an infinite value") + " at element " + std::to_string(i);
  return {};
}

}  // namespace attnlab::hf
