// `-i -`: standard input as a file that a reader can map.
#pragma once

#include <filesystem>

namespace ckhost {

class StdinSpool {
  public:
    // Standard input itself when it is a regular file read from its start (`< model.gguf`): no
    // copy. Anything else (a pipe, a socket, a file read from elsewhere than its start) is
    // copied to a file in $TMPDIR (else /tmp) that has no name (O_TMPFILE, or unlinked as soon
    // as it is created), so that no way of ending ckhost, an error, Ctrl-C or SIGKILL, can
    // leave it behind. A terminal is refused. Checks for Ctrl-C between reads.
    StdinSpool();
    ~StdinSpool();
    StdinSpool(const StdinSpool&) = delete;
    StdinSpool& operator=(const StdinSpool&) = delete;

    // /proc/self/fd/N: a path that opens the spooled bytes like any file.
    const std::filesystem::path& path() const { return path_; }

  private:
    int fd_ = -1;  // the spool file, or -1 when standard input is used as it is
    std::filesystem::path path_;
};

}  // namespace ckhost
