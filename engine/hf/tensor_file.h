#pragma once
// Reading Hugging Face weight files: one safetensors file's header (every entry checked against
// the file before anything is allocated for its data), the sharded form's index, and one tensor's
// bytes converted to float32 (F32, F16 and BF16 stored; F64 too).
#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::hf {

struct TensorEntry {
  std::string name;
  std::string path;   // the file holding it
  std::string dtype;  // as the header says, e.g. "BF16"
  std::vector<int64_t> shape;
  uint64_t offset = 0;  // absolute byte offset in the file
  uint64_t bytes = 0;
  uint64_t elements() const;
};

// Appends the entries of one safetensors file. Returns "" or "<path>: <what is wrong>": a header
// length beyond the file (or over 100 MB), malformed JSON, an unknown dtype, a shape or offsets
// that overflow, reverse, leave the data section or disagree with the dtype's size.
std::string readTensorHeader(const std::string& path, std::vector<TensorEntry>& out);

// The shard files model.safetensors.index.json names (its weight_map values), in first-use order.
// Refuses a name that leaves the folder (absolute, or with a ".." part) and a missing file.
std::string readShardIndex(const std::string& dir, std::vector<std::string>& files);

// Reads `e` into `out` (e.elements() floats). Refuses a dtype other than F32/F16/BF16/F64 and a
// value that is not finite, naming the file and tensor.
std::string readTensorFloats(const TensorEntry& e, float* out);

}  // namespace attnlab::hf
