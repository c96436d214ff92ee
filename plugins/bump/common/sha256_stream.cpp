#include "sha256_stream.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <string>
#include <system_error>

#include "ck/error.hpp"

namespace ckplugin::bump {
using namespace ck;
namespace {

EVP_MD_CTX* new_sha256_context() {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) {
        EVP_MD_CTX_free(ctx);
        throw Error("OpenSSL SHA-256 is unavailable");
    }
    return ctx;
}

}  // namespace

BackgroundSha256::BackgroundSha256() : context_(new_sha256_context()) {
    try {
        thread_ = std::thread([this] { run(); });
    } catch (const std::system_error& e) {  // only ck::Error may leave a plugin
        EVP_MD_CTX_free(context_);
        throw Error(std::string("cannot start the hashing thread: ") + e.what());
    }
}

BackgroundSha256::~BackgroundSha256() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    work_ready_.notify_all();
    thread_.join();
    EVP_MD_CTX_free(context_);
}

void BackgroundSha256::update(std::span<const std::byte> bytes) {
    if (bytes.empty()) return;
    {
        std::lock_guard lock(mutex_);
        queue_.push_back(bytes);
    }
    work_ready_.notify_one();
}

void BackgroundSha256::wait() noexcept {
    std::unique_lock lock(mutex_);
    work_done_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

Digest BackgroundSha256::digest() {
    wait();
    if (failed_) throw Error("OpenSSL SHA-256 update failed");
    Digest out{};
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(context_, out.data(), &length) != 1 || length != out.size())
        throw Error("OpenSSL SHA-256 finalisation failed");
    return out;
}

void BackgroundSha256::run() {
    std::unique_lock lock(mutex_);
    while (true) {
        work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        std::span<const std::byte> bytes = queue_.front();
        queue_.pop_front();
        busy_ = true;
        lock.unlock();
        bool ok = EVP_DigestUpdate(context_, bytes.data(), bytes.size()) == 1;
        lock.lock();
        busy_ = false;
        failed_ = failed_ || !ok;
        if (queue_.empty()) work_done_.notify_all();
    }
}

Digest sha256(std::span<const std::byte> bytes) {
    EVP_MD_CTX* ctx = new_sha256_context();
    Digest out{};
    unsigned int length = 0;
    bool ok = EVP_DigestUpdate(ctx, bytes.data(), bytes.size()) == 1 &&
              EVP_DigestFinal_ex(ctx, out.data(), &length) == 1;
    EVP_MD_CTX_free(ctx);
    if (!ok) throw Error("OpenSSL SHA-256 failed");
    return out;
}

Digest sha256_of_file(const std::filesystem::path& path, std::uint64_t from) {
    const std::string file = path.string();
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw ck::Error(std::string("cannot open the file: ") + std::strerror(errno), file);
    BackgroundSha256 hasher;
    std::vector<std::byte> buffers[2] = {std::vector<std::byte>(4u << 20),
                                         std::vector<std::byte>(4u << 20)};
    std::uint64_t offset = from;
    int which = 0;
    while (true) {
        ssize_t n =
            ::pread(fd, buffers[which].data(), buffers[which].size(), static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            hasher.wait();
            ::close(fd);
            throw ck::Error(std::string("read failed: ") + std::strerror(e), file, offset);
        }
        if (n == 0) break;
        hasher.wait();  // the other buffer is free again; this one is hashed while we read on
        hasher.update(std::span(buffers[which].data(), static_cast<std::size_t>(n)));
        offset += static_cast<std::uint64_t>(n);
        which ^= 1;
    }
    ::close(fd);
    return hasher.digest();
}

std::string hex(std::span<const std::uint8_t> bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (std::uint8_t b : bytes) {
        out += digits[b >> 4];
        out += digits[b & 15];
    }
    return out;
}

}  // namespace ckplugin::bump
