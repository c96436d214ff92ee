// Tensor bytes are little-endian in memory on every host (ggml's layout, which every format we
// read or write stores; the GGUF reader converts a big-endian file's tensors as it reads them),
// so code that reads or writes a multi-byte value inside tensor or file bytes goes through these
// instead of memcpy or a cast pointer. On a little-endian host (x86-64, ARM64) each is a plain
// load, store or nothing at all; on a big-endian one (s390x) it reverses the bytes.
#pragma once

#include <bit>
#include <boost/endian/conversion.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

namespace ck::le {

inline constexpr bool host_is_little = std::endian::native == std::endian::little;

// The unsigned integer of T's size, through which floats are loaded and stored.
template <class T>
using Bits = std::conditional_t<
    sizeof(T) == 1, std::uint8_t,
    std::conditional_t<sizeof(T) == 2, std::uint16_t,
                       std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;

// The value of type T stored little-endian at p (any alignment).
template <class T>
T load(const void* p) noexcept {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8);
    const auto bits = boost::endian::endian_load<Bits<T>, sizeof(T), boost::endian::order::little>(
        static_cast<const unsigned char*>(p));
    return std::bit_cast<T>(bits);
}

// Stores v little-endian at p (any alignment).
template <class T>
void store(void* p, T v) noexcept {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8);
    boost::endian::endian_store<Bits<T>, sizeof(T), boost::endian::order::little>(
        static_cast<unsigned char*>(p), std::bit_cast<Bits<T>>(v));
}

// Turns host-order values into their little-endian bytes, or back (the same reversal): for an
// array of floats or halves computed in place in a tensor's bytes, or read from them.
template <class T>
void in_place(std::span<T> values) noexcept {
    if constexpr (!host_is_little && sizeof(T) > 1)
        for (T& v : values)
            v = std::bit_cast<T>(
                boost::endian::endian_reverse(std::bit_cast<Bits<std::remove_const_t<T>>>(v)));
}
template <class T>
void in_place(T* values, std::size_t n) noexcept {
    in_place(std::span<T>(values, n));
}

// `n` values of type T read from little-endian bytes into host order.
template <class T>
void load_array(const void* bytes, T* out, std::size_t n) noexcept {
    if constexpr (host_is_little) {
        if (n > 0) std::memcpy(out, bytes, n * sizeof(T));
    } else {
        const auto* p = static_cast<const unsigned char*>(bytes);
        for (std::size_t i = 0; i < n; ++i) out[i] = load<T>(p + i * sizeof(T));
    }
}

// `n` host-order values written as little-endian bytes.
template <class T>
void store_array(void* bytes, const T* values, std::size_t n) noexcept {
    if constexpr (host_is_little) {
        if (n > 0) std::memcpy(bytes, values, n * sizeof(T));
    } else {
        auto* p = static_cast<unsigned char*>(bytes);
        for (std::size_t i = 0; i < n; ++i) store(p + i * sizeof(T), values[i]);
    }
}

}  // namespace ck::le
