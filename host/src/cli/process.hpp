// The process around a command: signals, and the limits a conversion needs raised.
#pragma once

namespace ckhost::cli {

// At start: notes whether this process is one job of a `ckhost batch` (CKHOST_BATCH_JOB), raises
// the open-file limit, and ignores SIGXFSZ.
void prepare_process();
// SIGINT and SIGTERM ask the running conversion to stop at its next chunk; a second one ends
// the process at once, except in a batch job (the batch decides when to kill).
void stop_on_interrupt();
// SIGINT and SIGTERM stop a batch: no new jobs, SIGINT forwarded to the running ones.
void stop_batch_on_interrupt();

}  // namespace ckhost::cli
