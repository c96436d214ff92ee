// What bump v3 and v4 writers share: the context option, the destination rules, the dtype table
// bytes, and the file whose header is patched in last while everything after it is hashed (SHA-256,
// on a second thread) as it is written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ck/context.hpp"
#include "ck/model.hpp"
#include "ck/options.hpp"
#include "ck/output.hpp"
#include "sha256_stream.hpp"

namespace ckplugin::bump {

// The writers' `context=N` option (1 .. 2^32-1; a usage error otherwise), if given.
std::optional<std::uint32_t> context_option(const ck::Options& options);

// Where the .bump file goes for `-o destination`: a directory (existing, or a new path without
// the .bump extension) holds weights.bump; `new_directory` says which case it was, so the
// caller can tell the user.
std::filesystem::path bump_file_path(const std::filesystem::path& destination, bool& new_directory);

// The u32 little-endian entry count followed by one byte per entry: the start of the payload
// in both versions, hashed with it.
std::vector<std::byte> dtype_table_bytes(std::span<const std::uint8_t> codes);

// "bump: N tensor(s) have no slot in <format> and are not written: a, b" when any are left.
void warn_unwritten(ck::Context& context, const std::vector<std::string>& names,
                    std::string_view format);

// Refuses a model whose RoPE is scaled (a scaling factor in its metadata, or a tensor of
// per-frequency factors such as Llama 3.1's rope_freqs.weight), naming the key or tensor.
// C-Kernel-Engine's bump v3 and v4 runtimes read only rope_theta from config.json and have no
// place for such factors, so the converted model would attend with the wrong positions at every
// length: a wrong result is refused, as bump v4 refuses biases it would have to drop.
void refuse_rope_scaling(const ck::ModelHeader& header, std::string_view format);

class HashedPayload {
  public:
    // Reserves the header (zeros, patched by the writer last, not hashed), then emits the
    // dtype table.
    void start(ck::OutputFile& file, std::size_t header_bytes,
               std::span<const std::byte> dtype_table);
    bool started() const noexcept { return file_ != nullptr; }
    ck::OutputFile& file() { return *file_; }

    // Queues bytes for hashing and writes them; they must stay valid until wait().
    void emit(std::span<const std::byte> bytes);
    void emit_zeros(std::uint64_t count);
    void wait() noexcept { hasher_->wait(); }
    Digest digest() { return hasher_->digest(); }

  private:
    ck::OutputFile* file_ = nullptr;
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
