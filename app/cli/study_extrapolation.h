#pragma once
// The extrapolation study, run by 'attnlab-cli study extrapolation' (cmd_study.cpp dispatches to it).
#include "args.h"

namespace attnlab::cli {

int runExtrapolationStudy(const Args& args);

}  // namespace attnlab::cli
