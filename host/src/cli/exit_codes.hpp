// ckhost's exit codes (cli.md), shared by the commands and by batch's per-job report.
#pragma once

#include "ck/error.hpp"

namespace ckhost {

enum ExitCode { ok = 0, failed = 1, usage = 2, plugin_error = 3, interrupted = 130 };

inline int exit_code_for(ck::ErrorKind kind) {
    switch (kind) {
        case ck::ErrorKind::usage:
            return usage;
        case ck::ErrorKind::plugin:
            return plugin_error;
        case ck::ErrorKind::interrupt:
            return interrupted;
        default:
            return failed;
    }
}

}  // namespace ckhost
