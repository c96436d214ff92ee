// Ordered, typed model metadata with every GGUF value type. Arrays are kept in GGUF's own
// encoding (little-endian elements; strings as u64 length + bytes) and usually point straight
// into the mapped input file, so a 150k-entry tokenizer costs one view, not 150k objects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ck/export.hpp"

namespace ck {

// GGUF's value type ids (gguf.md).
enum class ValueType : std::uint32_t {
    u8 = 0,
    i8 = 1,
    u16 = 2,
    i16 = 3,
    u32 = 4,
    i32 = 5,
    f32 = 6,
    boolean = 7,
    string = 8,
    array = 9,
    u64 = 10,
    i64 = 11,
    f64 = 12,
};

CK_SDK_API std::string_view value_type_name(ValueType t) noexcept;  // "u8" ... "f64", "str", "arr"
CK_SDK_API std::optional<ValueType> value_type_from_name(std::string_view name) noexcept;
// Bytes of one element of a fixed-size type; 0 for string and array.
CK_SDK_API std::size_t value_type_size(ValueType t) noexcept;
inline bool is_valid_value_type(std::uint32_t t) noexcept {
    return t <= 12;
}

// An array of one element type, as GGUF-encoded bytes. Cheap to copy (shares its owner).
class CK_SDK_API ArrayValue {
  public:
    ArrayValue() = default;
    // A view of encoded bytes kept alive by `owner` (e.g. the reader's file mapping). The
    // bytes must already have been validated (strings walkable to exactly `encoded.size()`).
    ArrayValue(ValueType element_type, std::uint64_t count, std::span<const std::byte> encoded,
               std::shared_ptr<const void> owner);

    static ArrayValue of_strings(std::span<const std::string> items);
    static ArrayValue of_strings(std::span<const std::string_view> items);
    // Fixed-size elements given as their raw little-endian bytes (count * size bytes).
    static ArrayValue of_raw(ValueType element_type, std::uint64_t count,
                             std::span<const std::byte> bytes);
    // Fixed-size elements given as host-order values of `element_size` bytes each (stored
    // little-endian whatever the host).
    static ArrayValue of_host_order(ValueType element_type, std::uint64_t count, const void* values,
                                    std::size_t element_size);
    template <class T>
    static ArrayValue of(ValueType element_type, std::span<const T> items) {
        return of_host_order(element_type, items.size(), items.data(), sizeof(T));
    }

    ValueType element_type() const noexcept { return element_type_; }
    std::uint64_t size() const noexcept { return count_; }
    std::span<const std::byte> encoded() const noexcept { return encoded_; }

    // Element i of a fixed-size array as raw bits, zero-extended (f32/f64 keep their bits).
    std::uint64_t raw_at(std::uint64_t i) const;
    // Calls fn for each string in order until it returns false; no allocation per element.
    void for_each_string(const std::function<bool(std::string_view)>& fn) const;
    // String i (walks from the start: O(i)). For display and small arrays.
    std::string_view string_at(std::uint64_t i) const;

  private:
    ValueType element_type_ = ValueType::u8;
    std::uint64_t count_ = 0;
    std::span<const std::byte> encoded_;
    std::shared_ptr<const void> owner_;
};

// One metadata value. Scalars keep their exact bits (an f32 NaN payload survives a round trip).
class CK_SDK_API Value {
  public:
    Value() = default;
    static Value scalar(ValueType type, std::uint64_t raw_bits);
    static Value of_u8(std::uint8_t v) { return scalar(ValueType::u8, v); }
    static Value of_u32(std::uint32_t v) { return scalar(ValueType::u32, v); }
    static Value of_i32(std::int32_t v);
    static Value of_u64(std::uint64_t v) { return scalar(ValueType::u64, v); }
    static Value of_f32(float v);
    static Value of_f64(double v);
    static Value of_bool(bool v) { return scalar(ValueType::boolean, v ? 1 : 0); }
    static Value of_string(std::string v);
    static Value of_array(ArrayValue v);

    ValueType type() const noexcept { return type_; }
    std::uint64_t raw() const noexcept { return raw_; }
    const std::string& str() const noexcept { return string_; }
    const ArrayValue& array() const noexcept { return array_; }

    bool is_integer() const noexcept;
    // The value as an integer when it is one of the integer types (sign-extended for signed
    // ones); nullopt otherwise or when it does not fit.
    std::optional<std::int64_t> as_int() const noexcept;
    std::optional<std::uint64_t> as_uint() const noexcept;
    // The value as a double when it is f32, f64 or an integer type.
    std::optional<double> as_double() const noexcept;
    std::optional<float> as_f32() const noexcept;  // only for an f32 value (exact)

    // A short human form: scalars in full, strings quoted, arrays as type, count, first items.
    std::string to_display(std::size_t max_items = 8) const;

  private:
    ValueType type_ = ValueType::u8;
    std::uint64_t raw_ = 0;
    std::string string_;
    ArrayValue array_;
};

// Ordered key -> value map. Order is the file's order; set() on a new key appends (as ggml's
// gguf_set_* does), on an existing key replaces in place.
class CK_SDK_API Metadata {
  public:
    using Entry = std::pair<std::string, Value>;

    const Value* find(std::string_view key) const;
    bool contains(std::string_view key) const { return find(key) != nullptr; }
    void set(std::string key, Value value);
    bool erase(std::string_view key);
    // Appends without a duplicate check; returns false (and changes nothing) on a duplicate.
    bool insert(std::string key, Value value);

    std::size_t size() const noexcept { return entries_.size(); }
    bool empty() const noexcept { return entries_.empty(); }
    const std::vector<Entry>& entries() const noexcept { return entries_; }
    auto begin() const noexcept { return entries_.begin(); }
    auto end() const noexcept { return entries_.end(); }

  private:
    void reindex();
    std::vector<Entry> entries_;
    std::unordered_map<std::string, std::size_t> index_;
};

}  // namespace ck
