#pragma once
// The low-precision ALiBi study, run by 'attnlab-cli study low-precision' (cmd_study.cpp dispatches to it).
#include "args.h"

namespace attnlab::cli {

int runLowPrecisionStudy(const Args& args);

}  // namespace attnlab::cli
