// SHA-256 (OpenSSL EVP) on a second thread, so that hashing a multi-GB payload overlaps with
// writing it: the writer queues a span, writes the same bytes to the file, and waits before it
// lets the span's owner go.
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <filesystem>
#include <mutex>
#include <span>
#include <string>
#include <thread>

struct evp_md_ctx_st;

namespace ckplugin::bump {

using Digest = std::array<std::uint8_t, 32>;

class BackgroundSha256 {
  public:
    BackgroundSha256();
    ~BackgroundSha256();
    BackgroundSha256(const BackgroundSha256&) = delete;
    BackgroundSha256& operator=(const BackgroundSha256&) = delete;

    // Queues bytes; they must stay valid until wait() or digest() returns.
    void update(std::span<const std::byte> bytes);
    // Blocks until every queued byte has been hashed (safe in destructors: never throws).
    void wait() noexcept;
    // Waits, then returns the digest of everything queued (call once); throws if an update
    // failed.
    Digest digest();

  private:
    void run();

    evp_md_ctx_st* context_ = nullptr;
    std::mutex mutex_;
    std::condition_variable work_ready_;
    std::condition_variable work_done_;
    std::deque<std::span<const std::byte>> queue_;
    bool busy_ = false;
    bool stopping_ = false;
    bool failed_ = false;
    std::thread thread_;
};

// SHA-256 of a file from byte `from` to its end, read with pread (not mapped, so that a
// many-GB file does not become resident); hashing overlaps the next read. ck::Error on failure.
Digest sha256_of_file(const std::filesystem::path& path, std::uint64_t from);
// Lowercase hex, as sha256sum prints it.
std::string hex(std::span<const std::uint8_t> bytes);

// SHA-256 of one buffer, on the calling thread.
Digest sha256(std::span<const std::byte> bytes);

}  // namespace ckplugin::bump
