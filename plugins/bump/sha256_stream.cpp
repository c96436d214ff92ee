#include "sha256_stream.hpp"

#include <openssl/evp.h>

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

}  // namespace ckplugin::bump
