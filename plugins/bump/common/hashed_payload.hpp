// The bump file as both writers write it: the header reserved (patched in last, not hashed),
// then every byte after it written and hashed (SHA-256, on a second thread) as it is emitted.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ck/model.hpp"
#include "ck/output.hpp"
#include "sha256_stream.hpp"

namespace ckplugin::bump {

class HashedPayload {
  public:
    // Reserves the header (zeros), then emits the dtype table.
    void start(ck::OutputFile& file, std::size_t header_bytes,
               std::span<const std::byte> dtype_table);
    bool started() const noexcept { return file_ != nullptr; }
    ck::OutputFile& file() { return *file_; }

    // Queues bytes for hashing and writes them; they must stay valid until wait().
    void emit(std::span<const std::byte> bytes);
    void emit_zeros(std::uint64_t count);
    // Emits bytes [begin, end) of `tensor` a chunk at a time, each hashed while it is written
    // and then released, so a large mapped tensor never becomes resident as a whole.
    void emit_released(const ck::TensorView& tensor, std::size_t begin, std::size_t end);
    void wait() noexcept { hasher_->wait(); }
    Digest digest() { return hasher_->digest(); }

    // A buffer of `bytes` to fill and emit. Two are alternated: the one returned is not the one
    // emitted last, so it can be filled while that one is still being hashed; wait() before
    // emitting it.
    std::span<std::byte> next_buffer(std::size_t bytes);

  private:
    ck::OutputFile* file_ = nullptr;
    std::vector<std::byte> buffers_[2];
    int current_ = 0;
    // After the buffers: destroyed (joined) first, while the buffers it may still read live.
    std::unique_ptr<BackgroundSha256> hasher_;
};

// Waits for the hashing thread before a tensor's bytes may be released, whichever way a
// write() leaves.
class WaitForHasher {
  public:
    explicit WaitForHasher(HashedPayload& payload) : payload_(payload) {}
    ~WaitForHasher() { payload_.wait(); }
    WaitForHasher(const WaitForHasher&) = delete;
    WaitForHasher& operator=(const WaitForHasher&) = delete;

  private:
    HashedPayload& payload_;
};

}  // namespace ckplugin::bump
