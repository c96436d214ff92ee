// llama.cpp's file types (ck/llama/file_type.hpp): the names, the loader's guess from tensor
// types, and the rule the host applies after every transform (keep_file_type_true).
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ck/ggml_types.hpp"
#include "ck/llama/file_type.hpp"
#include "ck/llama/tensors.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_file_type {

namespace {

using ck::GgmlType;
using ck::llama::FileType;

constexpr std::uint32_t id(GgmlType t) {
    return static_cast<std::uint32_t>(t);
}
constexpr std::uint32_t id(FileType t) {
    return static_cast<std::uint32_t>(t);
}

void add(ck::ModelHeader& h, std::string name, GgmlType type, std::vector<std::int64_t> ne) {
    ck::TensorInfo t;
    t.name = std::move(name);
    t.type = id(type);
    t.ne = std::move(ne);
    t.nbytes = *ck::tensor_bytes(t.type, t.ne);
    h.tensors.push_back(std::move(t));
}

// A llama-shaped header: the embedding, per layer two norms and seven matrices, the output
// norm and the output; `weights` for the matrices.
ck::ModelHeader llama(int layers, GgmlType weights) {
    ck::ModelHeader h;
    add(h, "token_embd.weight", weights, {256, 64});
    for (int i = 0; i < layers; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        add(h, p + "attn_norm.weight", GgmlType::f32, {256});
        add(h, p + "ffn_norm.weight", GgmlType::f32, {256});
        for (const char* m :
             {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"})
            add(h, p + m + ".weight", weights, {256, 256});
    }
    add(h, "output_norm.weight", GgmlType::f32, {256});
    add(h, "output.weight", weights, {256, 64});
    return h;
}

std::optional<std::uint32_t> stored(const ck::ModelHeader& h) {
    return ck::llama::stored_file_type(h.metadata);
}

void set_file_type(ck::ModelHeader& h, FileType t) {
    h.metadata.set("general.file_type", ck::Value::of_u32(id(t)));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(file_type)

BOOST_AUTO_TEST_CASE(names_are_llama_h_enumerators) {
    BOOST_TEST(ck::llama::file_type_label(0) == "0 (ALL_F32)");
    BOOST_TEST(ck::llama::file_type_label(1) == "1 (MOSTLY_F16)");
    BOOST_TEST(ck::llama::file_type_label(15) == "15 (MOSTLY_Q4_K_M)");
    BOOST_TEST(ck::llama::file_type_label(32) == "32 (MOSTLY_BF16)");
    BOOST_TEST(ck::llama::file_type_label(41) == "41 (MOSTLY_Q2_0)");
    // Removed from llama.cpp (Q4_1_SOME_F16, Q4_2, Q4_0_4_4 ...) or never used.
    for (std::uint32_t gone : {4u, 5u, 6u, 33u, 34u, 35u, 42u, 1024u})
        BOOST_TEST(ck::llama::file_type_label(gone) ==
                   std::to_string(gone) + " (no llama.cpp name)");
    // The table is in id order, without duplicates, and every default type is a ggml type.
    std::uint32_t previous = 0;
    for (const auto& info : ck::llama::file_types()) {
        BOOST_TEST((info.id == FileType::all_f32 || id(info.id) > previous), info.name);
        previous = id(info.id);
        BOOST_TEST((info.default_type == ck::llama::no_ggml_type ||
                    ck::find_type(info.default_type) != nullptr),
                   info.name);
    }
    BOOST_TEST(ck::llama::find_file_type(14)->default_type == id(GgmlType::q4_k));
    BOOST_TEST(ck::llama::find_file_type(28)->default_type == id(GgmlType::iq2_xs));
}

BOOST_AUTO_TEST_CASE(the_loader_names_the_most_common_type) {
    BOOST_TEST(id(*ck::llama::loader_file_type(id(GgmlType::q4_k))) == id(FileType::q4_k_m));
    BOOST_TEST(id(*ck::llama::loader_file_type(id(GgmlType::q3_k))) == id(FileType::q3_k_m));
    BOOST_TEST(id(*ck::llama::loader_file_type(id(GgmlType::iq2_s))) == id(FileType::iq2_s));
    for (GgmlType none : {GgmlType::q8_1, GgmlType::q8_k, GgmlType::mxfp4, GgmlType::i8,
                          GgmlType::i32, GgmlType::f64})
        BOOST_TEST(!ck::llama::loader_file_type(id(none)).has_value(), id(none));

    BOOST_TEST(id(*ck::llama::guess_file_type(llama(2, GgmlType::f32)).file_type) ==
               id(FileType::all_f32));
    BOOST_TEST(id(*ck::llama::guess_file_type(llama(2, GgmlType::f16)).file_type) ==
               id(FileType::f16));
    const auto q8 = ck::llama::guess_file_type(llama(2, GgmlType::q8_0));
    BOOST_TEST(id(*q8.file_type) == id(FileType::q8_0));
    BOOST_TEST(q8.count == 16u);    // tensors, not elements
    BOOST_TEST(q8.counted == 16u);  // the five norms are not counted
    // No tensor at all: llama.cpp's default, ALL_F32.
    BOOST_TEST(id(*ck::llama::guess_file_type(ck::ModelHeader{}).file_type) ==
               id(FileType::all_f32));
}

BOOST_AUTO_TEST_CASE(one_dimensional_tensors_count_only_without_matrices) {
    // phi-2-like: six 1-D tensors per layer against four matrices. llama.cpp's loader would
    // call it ALL_F32; it is a Q4_K_M file "except 1d tensors".
    ck::ModelHeader h;
    for (int i = 0; i < 4; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        for (const char* b : {"attn_norm.weight", "attn_norm.bias", "attn_qkv.bias",
                              "attn_output.bias", "ffn_up.bias", "ffn_down.bias"})
            add(h, p + b, GgmlType::f32, {256});
        for (const char* m :
             {"attn_qkv.weight", "attn_output.weight", "ffn_up.weight", "ffn_down.weight"})
            add(h, p + m, GgmlType::q4_k, {256, 256});
    }
    BOOST_TEST(id(*ck::llama::guess_file_type(h).file_type) == id(FileType::q4_k_m));
    // Only 1-D tensors (a [256, 1] counts as 1-D, as ggml_n_dims says): all are counted.
    ck::ModelHeader vectors;
    add(vectors, "a", GgmlType::f16, {256, 1});
    add(vectors, "b", GgmlType::f32, {256});
    add(vectors, "c", GgmlType::f16, {256});
    BOOST_TEST(ck::llama::n_dims(vectors.tensors[0]) == 1);
    BOOST_TEST(id(*ck::llama::guess_file_type(vectors).file_type) == id(FileType::f16));
}

BOOST_AUTO_TEST_CASE(ties_go_to_the_first_in_the_loaders_order) {
    // Outside the layers first, then by layer number (not by name: blk.10 after blk.2); the
    // first type to reach the highest count keeps it.
    ck::ModelHeader h;
    add(h, "blk.10.x.weight", GgmlType::q8_0, {32, 32});
    add(h, "blk.2.x.weight", GgmlType::q4_0, {32, 32});
    BOOST_TEST(id(*ck::llama::guess_file_type(h).file_type) == id(FileType::q4_0));
    add(h, "output.weight", GgmlType::q8_0, {32, 32});  // Q8_0 2, Q4_0 1
    BOOST_TEST(id(*ck::llama::guess_file_type(h).file_type) == id(FileType::q8_0));
    add(h, "token_embd.weight", GgmlType::q4_0, {32, 32});  // 2 each: Q4_0 got there first
    BOOST_TEST(id(*ck::llama::guess_file_type(h).file_type) == id(FileType::q4_0));
    BOOST_TEST(ck::llama::loader_order_less("output.weight", "blk.0.a"));
    BOOST_TEST(ck::llama::loader_order_less("blk.2.a", "blk.10.a"));
}

BOOST_AUTO_TEST_CASE(a_stored_value_fits_its_family) {
    const auto q4k = ck::llama::guess_file_type(llama(2, GgmlType::q4_k));
    BOOST_TEST(ck::llama::file_type_fits(id(FileType::q4_k_s), q4k));
    BOOST_TEST(ck::llama::file_type_fits(id(FileType::q4_k_m), q4k));
    BOOST_TEST(!ck::llama::file_type_fits(id(FileType::q5_k_m), q4k));
    BOOST_TEST(!ck::llama::file_type_fits(4, q4k));
    // MOSTLY_IQ2_S is "mostly IQ2_XS" to llama-quantize, and what the loader calls IQ2_S files.
    BOOST_TEST(ck::llama::file_type_fits(id(FileType::iq2_s),
                                         ck::llama::guess_file_type(llama(1, GgmlType::iq2_s))));
    BOOST_TEST(ck::llama::file_type_fits(id(FileType::iq2_s),
                                         ck::llama::guess_file_type(llama(1, GgmlType::iq2_xs))));
}

BOOST_AUTO_TEST_CASE(nothing_changes_while_the_types_stay) {
    ck::ModelHeader in = llama(2, GgmlType::q8_0);
    set_file_type(in, FileType::f16);  // wrong, but not ours to fix when no type changed
    ck::ModelHeader out = in;
    out.tensors[3].ne = {256, 512};  // shapes may change (headpack pads heads)
    BOOST_TEST(!ck::llama::keep_file_type_true(in, out).changed);
    BOOST_TEST(*stored(out) == 1u);
}

BOOST_AUTO_TEST_CASE(a_stale_value_is_replaced_by_llama_cpps_name) {
    ck::ModelHeader in = llama(2, GgmlType::q8_0);
    set_file_type(in, FileType::q8_0);
    in.metadata.set("general.quantization_version", ck::Value::of_u32(2));
    ck::ModelHeader out = llama(2, GgmlType::f32);  // dequantized
    out.metadata = in.metadata;
    const auto update = ck::llama::keep_file_type_true(in, out);
    BOOST_TEST(update.changed);
    BOOST_TEST(*stored(out) == 0u);
    BOOST_TEST(update.note ==
               "general.file_type 7 (MOSTLY_Q8_0) -> 0 (ALL_F32): the tensors are now mostly f32");
    // quantization_version stays: llama.cpp's tools write it in unquantized files too.
    BOOST_TEST(out.metadata.contains("general.quantization_version"));

    ck::ModelHeader f16 = llama(2, GgmlType::f16);
    f16.metadata = in.metadata;
    ck::llama::keep_file_type_true(in, f16);
    BOOST_TEST(*stored(f16) == 1u);
}

BOOST_AUTO_TEST_CASE(a_value_that_still_fits_is_kept) {
    // A Q4_K_S file whose output.weight was dequantized is still mostly Q4_K: Q4_K_S stays
    // (the guess would say Q4_K_M).
    ck::ModelHeader in = llama(2, GgmlType::q4_k);
    set_file_type(in, FileType::q4_k_s);
    in.metadata.set("general.quantization_version", ck::Value::of_u32(2));
    ck::ModelHeader out = in;
    out.tensors.back().type = id(GgmlType::f32);
    BOOST_TEST(!ck::llama::keep_file_type_true(in, out).changed);
    BOOST_TEST(*stored(out) == 14u);
}

BOOST_AUTO_TEST_CASE(a_value_the_stage_set_is_trusted) {
    // quantize[mix=q4_k_m] on rows no K type fits: mostly Q5_0, and still Q4_K_M, as
    // llama-quantize writes it.
    ck::ModelHeader in = llama(2, GgmlType::f16);
    set_file_type(in, FileType::f16);
    ck::ModelHeader out = llama(2, GgmlType::q5_0);
    out.metadata = in.metadata;
    set_file_type(out, FileType::q4_k_m);
    ck::llama::keep_file_type_true(in, out);
    BOOST_TEST(*stored(out) == 15u);
    // Removed by the stage: stays removed.
    out.metadata.erase("general.file_type");
    ck::llama::keep_file_type_true(in, out);
    BOOST_TEST(!stored(out).has_value());
}

BOOST_AUTO_TEST_CASE(a_mix_llama_cpp_cannot_name_loses_the_key) {
    ck::ModelHeader in = llama(2, GgmlType::q8_0);
    set_file_type(in, FileType::q8_0);
    ck::ModelHeader out = llama(2, GgmlType::i8);
    out.metadata = in.metadata;
    const auto update = ck::llama::keep_file_type_true(in, out);
    BOOST_TEST(!out.metadata.contains("general.file_type"));
    BOOST_TEST(update.note ==
               "general.file_type 7 (MOSTLY_Q8_0) removed: the tensors are now mostly i8, "
               "which llama.cpp has no file type for");
    // Absent before: nothing to say.
    in.metadata.erase("general.file_type");
    out.metadata.erase("general.file_type");
    BOOST_TEST(!ck::llama::keep_file_type_true(in, out).changed);
}

BOOST_AUTO_TEST_CASE(an_absent_key_is_added_with_the_quantization_version) {
    ck::ModelHeader in = llama(1, GgmlType::f16);
    ck::ModelHeader out = llama(1, GgmlType::q4_0);
    const auto update = ck::llama::keep_file_type_true(in, out);
    BOOST_TEST(*stored(out) == 2u);
    BOOST_TEST(*out.metadata.find("general.quantization_version")->as_uint() == 2u);
    BOOST_TEST(update.note ==
               "general.quantization_version set to 2; general.file_type set to 2 "
               "(MOSTLY_Q4_0): the tensors are now mostly q4_0");
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_file_type
