#pragma once
// The live-cache study (the soft-to-hard eviction paper), run by 'attnlab-cli study live-cache'
// (cmd_study.cpp dispatches to it): the engine's 2x2x2 grid (kv/live_cache_study.h) over seeds, written
// as report.md, results.csv, sweep.csv, findings.csv and charts/*.png.
#include "args.h"

namespace attnlab::cli {

int runLiveCacheStudy(const Args& args);

}  // namespace attnlab::cli
