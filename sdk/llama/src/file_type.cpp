#include "ck/llama/file_type.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <utility>
#include <vector>

#include "ck/llama/tensors.hpp"

namespace ck::llama {
namespace {

constexpr std::uint32_t id(GgmlType t) {
    return static_cast<std::uint32_t>(t);
}

// llama.h's enum with llama-quant.cpp's llama_ftype_get_default_type, in id order.
constexpr std::array<FileTypeInfo, 36> table = {{
    {FileType::all_f32, "ALL_F32", id(GgmlType::f32)},
    {FileType::f16, "MOSTLY_F16", id(GgmlType::f16)},
    {FileType::q4_0, "MOSTLY_Q4_0", id(GgmlType::q4_0)},
    {FileType::q4_1, "MOSTLY_Q4_1", id(GgmlType::q4_1)},
    {FileType::q8_0, "MOSTLY_Q8_0", id(GgmlType::q8_0)},
    {FileType::q5_0, "MOSTLY_Q5_0", id(GgmlType::q5_0)},
    {FileType::q5_1, "MOSTLY_Q5_1", id(GgmlType::q5_1)},
    {FileType::q2_k, "MOSTLY_Q2_K", id(GgmlType::q2_k)},
    {FileType::q3_k_s, "MOSTLY_Q3_K_S", id(GgmlType::q3_k)},
    {FileType::q3_k_m, "MOSTLY_Q3_K_M", id(GgmlType::q3_k)},
    {FileType::q3_k_l, "MOSTLY_Q3_K_L", id(GgmlType::q3_k)},
    {FileType::q4_k_s, "MOSTLY_Q4_K_S", id(GgmlType::q4_k)},
    {FileType::q4_k_m, "MOSTLY_Q4_K_M", id(GgmlType::q4_k)},
    {FileType::q5_k_s, "MOSTLY_Q5_K_S", id(GgmlType::q5_k)},
    {FileType::q5_k_m, "MOSTLY_Q5_K_M", id(GgmlType::q5_k)},
    {FileType::q6_k, "MOSTLY_Q6_K", id(GgmlType::q6_k)},
    {FileType::iq2_xxs, "MOSTLY_IQ2_XXS", id(GgmlType::iq2_xxs)},
    {FileType::iq2_xs, "MOSTLY_IQ2_XS", id(GgmlType::iq2_xs)},
    {FileType::q2_k_s, "MOSTLY_Q2_K_S", id(GgmlType::q2_k)},
    {FileType::iq3_xs, "MOSTLY_IQ3_XS", id(GgmlType::iq3_s)},
    {FileType::iq3_xxs, "MOSTLY_IQ3_XXS", id(GgmlType::iq3_xxs)},
    {FileType::iq1_s, "MOSTLY_IQ1_S", id(GgmlType::iq1_s)},
    {FileType::iq4_nl, "MOSTLY_IQ4_NL", id(GgmlType::iq4_nl)},
    {FileType::iq3_s, "MOSTLY_IQ3_S", id(GgmlType::iq3_s)},
    {FileType::iq3_m, "MOSTLY_IQ3_M", id(GgmlType::iq3_s)},
    {FileType::iq2_s, "MOSTLY_IQ2_S", id(GgmlType::iq2_xs)},
    {FileType::iq2_m, "MOSTLY_IQ2_M", id(GgmlType::iq2_s)},
    {FileType::iq4_xs, "MOSTLY_IQ4_XS", id(GgmlType::iq4_xs)},
    {FileType::iq1_m, "MOSTLY_IQ1_M", id(GgmlType::iq1_m)},
    {FileType::bf16, "MOSTLY_BF16", id(GgmlType::bf16)},
    {FileType::tq1_0, "MOSTLY_TQ1_0", id(GgmlType::tq1_0)},
    {FileType::tq2_0, "MOSTLY_TQ2_0", id(GgmlType::tq2_0)},
    {FileType::mxfp4_moe, "MOSTLY_MXFP4_MOE", id(GgmlType::mxfp4)},
    {FileType::nvfp4, "MOSTLY_NVFP4", no_ggml_type},
    {FileType::q1_0, "MOSTLY_Q1_0", id(GgmlType::q1_0)},
    {FileType::q2_0, "MOSTLY_Q2_0", id(GgmlType::q2_0)},
}};

// The switch in llama_model_loader's constructor: the file type it reports for a file whose
// most common tensor type is the first member. Not the inverse of the default types: three
// file types share Q3_K, and IQ2_S files are "mostly" IQ2_XS.
constexpr std::array<std::pair<GgmlType, FileType>, 27> loader_names = {{
    {GgmlType::f32, FileType::all_f32},     {GgmlType::f16, FileType::f16},
    {GgmlType::bf16, FileType::bf16},       {GgmlType::q4_0, FileType::q4_0},
    {GgmlType::q4_1, FileType::q4_1},       {GgmlType::q5_0, FileType::q5_0},
    {GgmlType::q5_1, FileType::q5_1},       {GgmlType::q8_0, FileType::q8_0},
    {GgmlType::q2_k, FileType::q2_k},       {GgmlType::q3_k, FileType::q3_k_m},
    {GgmlType::q4_k, FileType::q4_k_m},     {GgmlType::q5_k, FileType::q5_k_m},
    {GgmlType::q6_k, FileType::q6_k},       {GgmlType::tq1_0, FileType::tq1_0},
    {GgmlType::tq2_0, FileType::tq2_0},     {GgmlType::iq2_xxs, FileType::iq2_xxs},
    {GgmlType::iq2_xs, FileType::iq2_xs},   {GgmlType::iq2_s, FileType::iq2_s},
    {GgmlType::iq3_xxs, FileType::iq3_xxs}, {GgmlType::iq1_s, FileType::iq1_s},
    {GgmlType::iq1_m, FileType::iq1_m},     {GgmlType::iq4_nl, FileType::iq4_nl},
    {GgmlType::iq4_xs, FileType::iq4_xs},   {GgmlType::iq3_s, FileType::iq3_s},
    {GgmlType::nvfp4, FileType::nvfp4},     {GgmlType::q1_0, FileType::q1_0},
    {GgmlType::q2_0, FileType::q2_0},
}};

// Each tensor's (name, type), sorted: equal for two headers exactly when no tensor changed
// type and none was added or removed.
std::vector<std::pair<std::string_view, std::uint32_t>> typed_names(const ModelHeader& h) {
    std::vector<std::pair<std::string_view, std::uint32_t>> names;
    names.reserve(h.tensors.size());
    for (const TensorInfo& t : h.tensors) names.emplace_back(t.name, t.type);
    std::sort(names.begin(), names.end());
    return names;
}

bool same_value(const Value* a, const Value* b) {
    if (!a || !b) return a == b;
    return a->type() == b->type() && a->raw() == b->raw() && a->str() == b->str();
}

std::string name_of(std::uint32_t type) {
    return std::string(type_name(type));
}

}  // namespace

std::span<const FileTypeInfo> file_types() noexcept {
    return table;
}

const FileTypeInfo* find_file_type(std::uint32_t value) noexcept {
    for (const FileTypeInfo& info : table)
        if (static_cast<std::uint32_t>(info.id) == value) return &info;
    return nullptr;
}

std::string file_type_label(std::uint32_t value) {
    const FileTypeInfo* info = find_file_type(value);
    return std::to_string(value) + " (" +
           (info ? std::string(info->name) : std::string("no llama.cpp name")) + ")";
}

std::optional<FileType> loader_file_type(std::uint32_t type) noexcept {
    for (const auto& [ggml, file_type] : loader_names)
        if (id(ggml) == type) return file_type;
    return std::nullopt;
}

FileTypeGuess guess_file_type(const ModelHeader& header) {
    std::vector<std::size_t> order(header.tensors.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return loader_order_less(header.tensors[a].name, header.tensors[b].name);
    });
    const bool has_matrix = std::any_of(header.tensors.begin(), header.tensors.end(),
                                        [](const TensorInfo& t) { return n_dims(t) >= 2; });
    FileTypeGuess guess;
    guess.most_common_type = id(GgmlType::f32);
    std::map<std::uint32_t, std::size_t> counts;
    for (std::size_t i : order) {
        const TensorInfo& t = header.tensors[i];
        if (has_matrix && n_dims(t) < 2) continue;
        ++guess.counted;
        // Strictly more: on a tie the type that got there first stays, as in llama.cpp.
        if (const std::size_t n = ++counts[t.type]; n > guess.count) {
            guess.count = n;
            guess.most_common_type = t.type;
        }
    }
    guess.file_type = loader_file_type(guess.most_common_type);
    return guess;
}

bool file_type_fits(std::uint32_t stored, const FileTypeGuess& guess) {
    const FileTypeInfo* info = find_file_type(stored);
    if (!info) return false;
    return info->default_type == guess.most_common_type || guess.file_type == info->id;
}

std::optional<std::uint32_t> stored_file_type(const Metadata& metadata) {
    const Value* v = metadata.find(file_type_key);
    if (!v) return std::nullopt;
    const std::optional<std::uint64_t> n = v->as_uint();
    if (!n || *n > 0xffffffffu) return std::nullopt;
    return static_cast<std::uint32_t>(*n);
}

namespace {

// Makes general.file_type a fair name for `header`'s tensors: a value that fits is kept, one
// that does not becomes llama.cpp's name for them, or goes when llama.cpp has none; an absent
// key is added when llama.cpp has a name. The note ends with `why_prefix` and the type of the
// most tensors ("the tensors are now mostly f32").
void name_file_type(ModelHeader& header, const std::string& why_prefix,
                    std::vector<std::string>& notes) {
    const Value* is = header.metadata.find(file_type_key);
    const FileTypeGuess guess = guess_file_type(header);
    const std::optional<std::uint32_t> stored = stored_file_type(header.metadata);
    const std::string why = why_prefix + name_of(guess.most_common_type);
    if (stored && file_type_fits(*stored, guess)) {
        // Still true: a Q4_K_S file whose output.weight was dequantized stays Q4_K_S.
    } else if (guess.file_type) {
        const auto value = static_cast<std::uint32_t>(*guess.file_type);
        const std::string was =
            is ? (stored ? file_type_label(*stored) : is->to_display()) + " -> " : "set to ";
        header.metadata.set(std::string(file_type_key), Value::of_u32(value));
        notes.push_back(std::string(file_type_key) + " " + was + file_type_label(value) + ": " +
                        why);
    } else if (is) {
        notes.push_back(std::string(file_type_key) + " " +
                        (stored ? file_type_label(*stored) : is->to_display()) +
                        " removed: " + why + ", which llama.cpp has no file type for");
        header.metadata.erase(file_type_key);
    }
}

FileTypeUpdate update_from_notes(const std::vector<std::string>& notes) {
    FileTypeUpdate update;
    update.changed = !notes.empty();
    for (const std::string& n : notes) update.note += (update.note.empty() ? "" : "; ") + n;
    return update;
}

}  // namespace

bool file_type_contradicts(std::uint32_t stored, const FileTypeGuess& guess) {
    const FileTypeInfo* info = find_file_type(stored);
    if (!info || guess.counted == 0 || file_type_fits(stored, guess)) return false;
    const auto quantized = [](std::uint32_t type) {
        const TypeInfo* t = find_type(type);
        return t && t->quantized;
    };
    // llama-quantize names the file after the mixture it was asked for, also when rows that fit
    // no K block (micro-odd's Q4_K_M is mostly Q5_0) or --tensor-type overrides gave most
    // tensors another quantized type.
    return !(quantized(info->default_type) && quantized(guess.most_common_type));
}

FileTypeUpdate keep_file_type_true(const ModelHeader& before, ModelHeader& after) {
    if (typed_names(before) == typed_names(after)) return {};

    const bool any_quantized =
        std::any_of(after.tensors.begin(), after.tensors.end(), [](const TensorInfo& t) {
            const TypeInfo* info = find_type(t.type);
            return info && info->quantized;
        });
    std::vector<std::string> notes;
    if (any_quantized && !after.metadata.contains(quantization_version_key)) {
        after.metadata.set(std::string(quantization_version_key),
                           Value::of_u32(quantization_version));
        notes.push_back(std::string(quantization_version_key) + " set to " +
                        std::to_string(quantization_version));
    }
    // Set, changed or removed by the stage itself: it knows better than the types.
    if (same_value(before.metadata.find(file_type_key), after.metadata.find(file_type_key)))
        name_file_type(after, "the tensors are now mostly ", notes);
    return update_from_notes(notes);
}

FileTypeUpdate name_file_type_as_read(ModelHeader& header) {
    std::string stored;  // "Q4_per_group_64, Q8_per_channel": what the reader converted
    for (const TensorInfo& t : header.tensors)
        if (!t.stored_type.empty() && stored.find(t.stored_type) == std::string::npos)
            stored += (stored.empty() ? "" : ", ") + t.stored_type;
    // Without the key the file claims nothing, and a reader's header gains no keys.
    if (stored.empty() || !header.metadata.contains(file_type_key)) return {};
    std::vector<std::string> notes;
    name_file_type(header, "the file stores " + stored + " and is read as mostly ", notes);
    return update_from_notes(notes);
}

}  // namespace ck::llama
