#pragma once
// The projection-sharing study, run by 'attnlab-cli study projection-sharing' (cmd_study.cpp dispatches to it).
#include "args.h"

namespace attnlab::cli {

int runProjectionSharingStudy(const Args& args);

}  // namespace attnlab::cli
