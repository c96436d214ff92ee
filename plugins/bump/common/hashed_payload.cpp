#include "hashed_payload.hpp"

#include <algorithm>

namespace ckplugin::bump {
namespace {

// In .bss: reading it maps the kernel's shared zero page, so it costs no resident memory.
std::byte zero_bytes[1u << 20];
constexpr std::size_t release_chunk = 4u << 20;

}  // namespace

void HashedPayload::start(ck::OutputFile& file, std::size_t header_bytes,
                          std::span<const std::byte> dtype_table) {
    file_ = &file;
    hasher_ = std::make_unique<BackgroundSha256>();
    file_->write_zeros(header_bytes);
    emit(dtype_table);
    hasher_->wait();  // the caller's table may go
}

void HashedPayload::emit(std::span<const std::byte> bytes) {
    hasher_->update(bytes);
    file_->write(bytes);
}

void HashedPayload::emit_zeros(std::uint64_t count) {
    while (count > 0) {
        auto n = static_cast<std::size_t>(std::min<std::uint64_t>(count, sizeof zero_bytes));
        emit(std::span<const std::byte>(zero_bytes, n));
        count -= n;
    }
}

void HashedPayload::emit_released(const ck::TensorView& tensor, std::size_t begin,
                                  std::size_t end) {
    const auto bytes = tensor.bytes();
    for (std::size_t from = begin; from < end; from += release_chunk) {
        const std::size_t to = std::min(end, from + release_chunk);
        emit(bytes.subspan(from, to - from));
        wait();
        tensor.release(from, to);
    }
}

std::span<std::byte> HashedPayload::next_buffer(std::size_t bytes) {
    current_ ^= 1;
    auto& b = buffers_[current_];
    if (b.size() < bytes) b.resize(bytes);
    return std::span(b).first(bytes);
}

}  // namespace ckplugin::bump
