#pragma once
// The induction phase-change study (with momentum attention), run by
// 'attnlab-cli study phase-change' (cmd_study.cpp dispatches to it).
#include "args.h"

namespace attnlab::cli {

int runPhaseChangeStudy(const Args& args);

}  // namespace attnlab::cli
