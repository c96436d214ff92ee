#include "gguf_endian.hpp"

#include <boost/endian/conversion.hpp>

#include <algorithm>
#include <cstring>
#include <memory>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"

namespace ckplugin::gguf {
using namespace ck;

namespace {

using support::ByteCursor;

constexpr std::uint32_t id(GgmlType t) {
    return static_cast<std::uint32_t>(t);
}

// gguf_convert_endian.py's rules: the float types are reversed element by element; of the
// block types it knows, only the ggml_half scales are multi-byte fields. Every other type is
// refused by the script ("Cannot handle type"), and so by us: Q4_1, Q5_*, Q8_1, Q2_K, Q3_K,
// Q5_K, Q8_K, the IQ types, TQ1_0, Q2_0 and I16..F64 have multi-byte fields it never learnt to
// swap (I8 has none, but the script refuses it all the same).
constexpr SwapRule swap_rules[] = {
    {id(GgmlType::f32), 4, 1, {0, 0}},
    {id(GgmlType::f16), 2, 1, {0, 0}},
    {id(GgmlType::bf16), 2, 1, {0, 0}},
    {id(GgmlType::q4_0), 2, 1, {0, 0}},    // d, then 16 bytes of nibbles
    {id(GgmlType::q8_0), 2, 1, {0, 0}},    // d, then 32 int8
    {id(GgmlType::q4_k), 2, 2, {0, 2}},    // d, dmin, then 12 scale bytes and 128 of nibbles
    {id(GgmlType::q6_k), 2, 1, {208, 0}},  // 128 + 64 bytes of codes, 16 int8 scales, then d
    {id(GgmlType::tq2_0), 2, 1, {64, 0}},  // 64 bytes of codes, then d
    {id(GgmlType::q1_0), 2, 1, {0, 0}},    // d, then 16 bytes of bits
    {id(GgmlType::mxfp4), 0, 0, {0, 0}},   // a one-byte E8M0 scale and 16 bytes of nibbles
    {id(GgmlType::nvfp4), 0, 0, {0, 0}},   // four one-byte UE4M3 scales and 32 bytes of nibbles
};

// Bytes converted (and written, and released) at a time: a multi-GB tensor never has more
// than this in flight beyond its own copy.
constexpr std::size_t chunk_bytes = 4u << 20;

template <class T>
void reverse_at(std::byte* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof v);
    v = boost::endian::endian_reverse(v);
    std::memcpy(p, &v, sizeof v);
}

template <class T>
void reverse_fields(const SwapRule& rule, std::size_t block, std::span<std::byte> blocks) {
    for (std::size_t at = 0; at + block <= blocks.size(); at += block)
        for (std::uint8_t f = 0; f < rule.count; ++f)
            reverse_at<T>(blocks.data() + at + rule.offsets[f]);
}

std::size_t block_bytes(const SwapRule& rule) {
    return find_type(rule.type)->block_bytes;
}

const SwapRule& rule_for(std::uint32_t type) {
    const SwapRule* rule = find_swap_rule(type);
    if (!rule) throw Error(swap_refusal(type));
    return *rule;
}

// Calls fn(begin, end) over `size` bytes in pieces of whole blocks of about chunk_bytes.
template <class Fn>
void for_each_chunk(std::size_t size, std::size_t block, Fn&& fn) {
    const std::size_t step = std::max<std::size_t>(1, chunk_bytes / block) * block;
    for (std::size_t begin = 0; begin < size; begin += step)
        fn(begin, std::min(size, begin + step));
}

// Walks GGUF fields in `from` order and reverses each multi-byte one where it lies. The
// walked bytes are well-formed (the writer made them, or the reader validated them), so the
// cursor's bounds checks only guard against a bug here.
class FieldSwapper {
  public:
    FieldSwapper(std::span<std::byte> bytes, ByteOrder from)
        : bytes_(bytes), in_(bytes.data(), bytes.size(), "GGUF header", from) {}

    template <class T>
    T field() {
        const std::uint64_t at = in_.pos();
        const T v = in_.read<T>("a field");
        reverse_at<T>(bytes_.data() + at);
        return v;
    }
    void skip(std::uint64_t n) { in_.skip(n, "a string"); }
    void string() { skip(field<std::uint64_t>()); }

    void value(ValueType type) {
        if (type == ValueType::string) return string();
        if (type == ValueType::array) {
            const auto element = static_cast<ValueType>(field<std::uint32_t>());
            return elements(element, field<std::uint64_t>());
        }
        scalars(type, 1);
    }

    void elements(ValueType type, std::uint64_t count) {
        if (type == ValueType::string)
            for (std::uint64_t i = 0; i < count; ++i) string();
        else
            scalars(type, count);
    }

  private:
    void scalars(ValueType type, std::uint64_t count) {
        switch (value_type_size(type)) {
            case 2:
                for (std::uint64_t i = 0; i < count; ++i) field<std::uint16_t>();
                return;
            case 4:
                for (std::uint64_t i = 0; i < count; ++i) field<std::uint32_t>();
                return;
            case 8:
                for (std::uint64_t i = 0; i < count; ++i) field<std::uint64_t>();
                return;
            default:
                skip(count * value_type_size(type));
        }
    }

    std::span<std::byte> bytes_;
    ByteCursor in_;
};

}  // namespace

std::string_view byte_order_name(ByteOrder order) noexcept {
    return order == ByteOrder::big ? "big-endian" : "little-endian";
}

ByteOrder byte_order_option(const Options& options) {
    return options.get("endian", "little") == "big" ? ByteOrder::big : ByteOrder::little;
}

const SwapRule* find_swap_rule(std::uint32_t type) noexcept {
    for (const SwapRule& rule : swap_rules)
        if (rule.type == type) return &rule;
    return nullptr;
}

std::string swap_refusal(std::uint32_t type) {
    std::string can;
    for (const SwapRule& rule : swap_rules)
        can += (can.empty() ? "" : ", ") + std::string(type_name(rule.type));
    return "tensor data of type " + std::string(type_name(type)) +
           " cannot change byte order: gguf_convert_endian.py's rules, which we follow, convert "
           "only " +
           can;
}

void swap_blocks(const SwapRule& rule, std::span<std::byte> blocks) {
    if (rule.width == 2) reverse_fields<std::uint16_t>(rule, block_bytes(rule), blocks);
    if (rule.width == 4) reverse_fields<std::uint32_t>(rule, block_bytes(rule), blocks);
}

TensorView swapped_copy(std::uint32_t type, const TensorView& from) {
    const SwapRule& rule = rule_for(type);
    TensorAllocation to = TensorView::allocate(from.size());
    for_each_chunk(from.size(), block_bytes(rule), [&](std::size_t begin, std::size_t end) {
        std::memcpy(to.bytes.data() + begin, from.data() + begin, end - begin);
        swap_blocks(rule, to.bytes.subspan(begin, end - begin));
        from.release(begin, end);
    });
    return std::move(to.view);
}

void write_swapped(OutputFile& file, std::uint32_t type, const TensorView& tensor) {
    const SwapRule& rule = rule_for(type);
    std::vector<std::byte> buffer;
    for_each_chunk(tensor.size(), block_bytes(rule), [&](std::size_t begin, std::size_t end) {
        buffer.assign(tensor.data() + begin, tensor.data() + end);
        swap_blocks(rule, buffer);
        file.write(buffer);
        tensor.release(begin, end);
    });
}

ArrayValue little_endian_array(const ArrayValue& from_file) {
    const ValueType element = from_file.element_type();
    if (element != ValueType::string && value_type_size(element) == 1) return from_file;
    const auto encoded = from_file.encoded();
    auto copy = std::make_shared<std::vector<std::byte>>(encoded.begin(), encoded.end());
    FieldSwapper(*copy, ByteOrder::big).elements(element, from_file.size());
    return ArrayValue(element, from_file.size(), *copy, copy);
}

void swap_header(std::span<std::byte> header, ByteOrder from) {
    FieldSwapper fields(header, from);
    fields.skip(4);                 // the magic is four characters in either order
    fields.field<std::uint32_t>();  // version
    const auto n_tensors = fields.field<std::uint64_t>();
    const auto n_kv = fields.field<std::uint64_t>();
    for (std::uint64_t i = 0; i < n_kv; ++i) {
        fields.string();
        fields.value(static_cast<ValueType>(fields.field<std::uint32_t>()));
    }
    for (std::uint64_t i = 0; i < n_tensors; ++i) {
        fields.string();
        const auto n_dims = fields.field<std::uint32_t>();
        for (std::uint32_t d = 0; d < n_dims; ++d) fields.field<std::uint64_t>();
        fields.field<std::uint32_t>();  // type
        fields.field<std::uint64_t>();  // offset
    }
}

}  // namespace ckplugin::gguf
