#pragma once
// The QK-runaway study, run by 'attnlab-cli study qk-runaway' (cmd_study.cpp dispatches to it).
#include "args.h"

namespace attnlab::cli {

int runQkRunawayStudy(const Args& args);

}  // namespace attnlab::cli
