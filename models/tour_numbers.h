#pragma once
// The live numbers a tour may name (tour_expression.h), what each means, and how they are computed
// from a run: its progress, the probe's trace and a snapshot of the model. Layers, heads and
// positions are 1-based, as the app's pickers count them. computeTourNumbers() does engine work
// (map diagnostics, head importance, decoding through the KV cache) and so runs off the UI thread;
// it computes only the numbers asked for, and leaves out (unknown, NaN) what the run cannot tell.
// A layer argument "L" and a head argument "H" mean the selected head; a position "last" the
// probe's last token: "induction(L,H)", "weight(L,H,last,1)".
#include <map>
#include <string>
#include <vector>

#include "snapshots.h"
#include "tour_expression.h"

namespace attnlab {

struct TourNumberSpec {
  std::string name;
  std::vector<std::string> args;  // argument names, e.g. {"L", "H"}
  std::string meaning;            // one line, for the user guide and error messages
};
const std::vector<TourNumberSpec>& tourNumberSpecs();
// "" when `call` names a known number with the right count of arguments, else the reason.
std::string checkTourCall(const TourCall& call);

struct TourRunState {
  ProgressSnapshot progress;
  bool hasProgress = false;
  std::shared_ptr<const TraceSnapshot> trace;  // its model snapshot too
  int selectedLayer = 0, selectedHead = 0;     // 0-based, as the views select
  int trainTarget = 0;                         // the latest @train's step (@train-until: its most); 0 before one
  std::map<std::string, double> kept;          // the numbers earlier steps kept (@keep), by name
};

// The corrupted probe the patch numbers use: `clean` with each token of its first half redrawn
// (seeded, never the same token), the second half as it was.
std::vector<int> corruptedTwin(const std::vector<int>& clean, int vocab);

// Every call's value that the run can tell, keyed by TourCall::key(). Throws std::invalid_argument
// with a one-line reason for arguments the numbers cannot take (a layer the model lacks, an
// unknown eviction policy).
TourNumbers computeTourNumbers(const std::vector<TourCall>& calls, const TourRunState& state);

}  // namespace attnlab
