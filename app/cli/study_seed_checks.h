#pragma once
// The seed-checks study, run by 'attnlab-cli study seed-checks' (cmd_study.cpp dispatches to it).
#include "args.h"

namespace attnlab::cli {

int runSeedChecksStudy(const Args& args);

}  // namespace attnlab::cli
