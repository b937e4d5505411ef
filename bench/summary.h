#pragma once
// Reads the result lines of both sides (attnlab-bench and torch_peer.py, one JSON object per
// repetition) and writes the comparison as a Markdown table: median and spread over the
// repetitions, the ratio and each target's status.
#include <istream>
#include <ostream>
#include <string>

namespace attnlab::bench {

// Returns "" on success, else a one-line reason (a line that is not a result).
std::string summarize(std::istream& results, std::ostream& out);

}  // namespace attnlab::bench
