#pragma once
// The attention-sink study, run by 'attnlab-cli study sinks' (cmd_study.cpp dispatches to it).
#include "args.h"

namespace attnlab::cli {

int runSinksStudy(const Args& args);

}  // namespace attnlab::cli
