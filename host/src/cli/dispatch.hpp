// From argv to a command: the global options in front of the command name, `help`,
// `--version`, the command table's rows, and the form without a command name (convert); and
// from a ck::Error to its message, --json error document and exit code.
#pragma once

#include "ck/error.hpp"

namespace ckhost::cli {

// Runs the command argv names; throws ck::Error for usage and conversion errors.
int dispatch(int argc, char** argv);
// Whether --json was given anywhere: a usage error found before the command parsed its options
// still owes a script its error document.
bool json_requested(int argc, char** argv);
// The error on stderr, and with --json as a document on stdout; returns the exit code for it.
int report_error(const ck::Error& e, bool as_json);

}  // namespace ckhost::cli
