// Model weights in the safetensors format (https://huggingface.co/docs/safetensors):
// 8-byte little-endian header length N, N bytes of JSON header, then the raw tensor bytes.
// Every parameter is stored as F32 with its logical (PyTorch) shape, row-major.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/checkpoint.h"
#include "core/files.h"
#include "core/json_limits.h"

namespace attnlab {

static_assert(std::endian::native == std::endian::little, "safetensors stores little-endian data; this host is not");

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// A header this large is not a weights file; refusing it bounds the memory a bad file can claim.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

uint64_t elementCount(const std::vector<int>& shape) {
  uint64_t n = 1;
  for (int d : shape) n *= static_cast<uint64_t>(std::max(d, 0));
  return n;
}

std::string shapeText(const std::vector<int>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string shown(const Json& j) {
  std::string s = j.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// Where one tensor's bytes lie within the data section.
struct Slot {
  std::string name;
  Param* param = nullptr;
  uint64_t begin = 0;
  uint64_t end = 0;
};

bool isCount(const Json& j) { return j.is_number_unsigned(); }

// Checks one header entry against the parameter it must fill. Returns "" or the complaint
// (the caller prefixes "<file>: tensor <name> ").
std::string checkEntry(const Json& entry, const Param& param, uint64_t dataSize, Slot& slot) {
  if (!entry.is_object()) return "has a malformed entry " + shown(entry) + " (expected an object)";
  for (const auto& [key, value] : entry.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets") return "has an unknown field \"" + key + "\"";
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!entry.contains(key)) return std::string("has no ") + key;

  const Json& dtype = entry["dtype"];
  if (dtype != "F32") return "has dtype " + shown(dtype) + ", expected \"F32\"";

  const Json& shape = entry["shape"];
  if (!shape.is_array() || !std::all_of(shape.begin(), shape.end(), isCount))
    return "has a malformed shape " + shown(shape) + " (expected a list of non-negative integers)";
  bool sameShape = shape.size() == param.shape.size();
  for (size_t i = 0; sameShape && i < shape.size(); ++i)
    sameShape = shape[i].get<uint64_t>() == static_cast<uint64_t>(param.shape[i]);
  if (!sameShape) {
    std::string found = "[";
    for (size_t i = 0; i < shape.size(); ++i) found += (i ? ", " : "") + std::to_string(shape[i].get<uint64_t>());
    return "has shape " + found + "], expected " + shapeText(param.shape);
  }

  const Json& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !isCount(offsets[0]) || !isCount(offsets[1]))
    return "has malformed data_offsets " + shown(offsets) + " (expected [begin, end])";
  slot.begin = offsets[0].get<uint64_t>();
  slot.end = offsets[1].get<uint64_t>();
  const std::string range = "[" + std::to_string(slot.begin) + ", " + std::to_string(slot.end) + "]";
  if (slot.begin > slot.end) return "has reversed data_offsets " + range;
  if (slot.end > dataSize)
    return "has data_offsets " + range + " outside the " + std::to_string(dataSize) + "-byte data section";
  const uint64_t expected = elementCount(param.shape) * sizeof(float);
  if (slot.end - slot.begin != expected)
    return "has data_offsets " + range + " spanning " + std::to_string(slot.end - slot.begin) + " bytes, expected " +
           std::to_string(expected) + " for shape " + shapeText(param.shape) + " in F32";
  return {};
}

// The tensors must tile the data section exactly: no gaps, no overlaps, nothing left over.
std::string checkCoverage(std::vector<Slot>& slots, uint64_t dataSize) {
  std::sort(slots.begin(), slots.end(),
            [](const Slot& a, const Slot& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  uint64_t covered = 0;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].begin < covered) return "tensors " + slots[i - 1].name + " and " + slots[i].name + " overlap";
    if (slots[i].begin > covered)
      return "data bytes [" + std::to_string(covered) + ", " + std::to_string(slots[i].begin) +
             ") belong to no tensor";
    covered = slots[i].end;
  }
  if (covered != dataSize)
    return "data bytes [" + std::to_string(covered) + ", " + std::to_string(dataSize) + ") belong to no tensor";
  return {};
}

}  // namespace

std::string writeSafetensors(const std::string& path, const ParamStore& params) {
  OrderedJson header = OrderedJson::object();
  header["__metadata__"] = {{"format", "attnlab"}};
  uint64_t offset = 0;
  for (const auto& p : params.all()) {
    const uint64_t count = elementCount(p->shape);
    if (count != static_cast<uint64_t>(p->value.size()))
      return path + ": tensor " + p->name + " holds " + std::to_string(p->value.size()) + " values but its shape " +
             shapeText(p->shape) + " needs " + std::to_string(count);
    header[p->name] = {{"dtype", "F32"}, {"shape", p->shape}, {"data_offsets", {offset, offset + count * 4}}};
    offset += count * sizeof(float);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the format allows space padding; it aligns the data to 8 bytes

  std::string bytes;
  bytes.reserve(8 + text.size() + offset);
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((uint64_t(text.size()) >> (8 * i)) & 0xff));
  bytes += text;
  for (const auto& p : params.all())
    if (p->value.size() > 0) bytes.append(reinterpret_cast<const char*>(p->value.data()), p->value.size() * sizeof(float));
  return writeFileAtomic(path, bytes);
}

std::string readSafetensors(const std::string& path, ParamStore& params) {
  const std::string where = path + ": ";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return where + "not found or not a regular file";
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  const std::streamoff end = in ? static_cast<std::streamoff>(in.tellg()) : -1;
  if (end < 0) return where + "cannot open (" + lastSystemError() + ")";
  const uint64_t fileSize = static_cast<uint64_t>(end);
  in.seekg(0);
  if (fileSize < 8) return where + "too short to be a safetensors file (" + std::to_string(fileSize) + " bytes)";

  unsigned char lengthBytes[8];
  if (!in.read(reinterpret_cast<char*>(lengthBytes), 8)) return where + "cannot read (" + lastSystemError() + ")";
  uint64_t headerSize = 0;
  for (int i = 0; i < 8; ++i) headerSize |= uint64_t(lengthBytes[i]) << (8 * i);
  if (headerSize > kMaxHeaderBytes)
    return where + "header length " + std::to_string(headerSize) + " exceeds the 100 MB limit (not a weights file?)";
  if (headerSize > fileSize - 8)
    return where + "header length " + std::to_string(headerSize) + " exceeds the file size " +
           std::to_string(fileSize);

  std::string headerText(headerSize, '\0');
  if (!in.read(headerText.data(), static_cast<std::streamsize>(headerSize)))
    return where + "cannot read the header (" + lastSystemError() + ")";
  if (std::string why = checkJsonDepth(headerText); !why.empty()) return where + "header " + why;
  Json header;
  try {
    header = Json::parse(headerText);
  } catch (const Json::exception& e) {  // a syntax error, or a number too large for a double (406)
    std::string why = e.what();  // "[json.exception.parse_error.101] parse error at ..."
    return where + "header is not valid JSON (" + why.substr(why.find("] ") + 2) + ")";
  }
  if (!header.is_object()) return where + "header is not a JSON object, got " + shown(header);

  const uint64_t dataStart = 8 + headerSize;
  const uint64_t dataSize = fileSize - dataStart;
  std::vector<Slot> slots;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object() || !std::all_of(entry.begin(), entry.end(), [](const Json& v) { return v.is_string(); }))
        return where + "__metadata__ must be an object of strings, got " + shown(entry);
      continue;
    }
    Param* param = params.find(name);
    if (!param) return where + "unexpected tensor " + name + " (this model has no such parameter)";
    Slot slot{name, param};
    if (std::string why = checkEntry(entry, *param, dataSize, slot); !why.empty())
      return where + "tensor " + name + " " + why;
    slots.push_back(slot);
  }
  for (const auto& p : params.all())
    if (!header.contains(p->name)) return where + "tensor " + p->name + " is missing";
  if (std::string why = checkCoverage(slots, dataSize); !why.empty()) return where + why;

  // Read everything before touching `params`, so a failure leaves the model as it was.
  std::vector<Mat> values;
  for (const Slot& slot : slots) {
    Mat value(slot.param->value.rows(), slot.param->value.cols());
    if (static_cast<uint64_t>(value.size()) * sizeof(float) != slot.end - slot.begin)
      return where + "tensor " + slot.name + ": the model's parameter does not match its own shape";
    in.seekg(static_cast<std::streamoff>(dataStart + slot.begin));
    if (value.size() > 0 && !in.read(reinterpret_cast<char*>(value.data()), static_cast<std::streamsize>(slot.end - slot.begin)))
      return where + "cannot read the data of tensor " + slot.name;
    for (Eigen::Index i = 0; i < value.size(); ++i)
      if (!std::isfinite(value.data()[i]))
        return where + "tensor " + slot.name + " has " + (std::isnan(value.data()[i]) ? "NaN" : "an infinite value") +
               " at element " + std::to_string(i);
    values.push_back(std::move(value));
  }
  for (size_t i = 0; i < slots.size(); ++i) slots[i].param->value = std::move(values[i]);
  return {};
}

}  // namespace attnlab
