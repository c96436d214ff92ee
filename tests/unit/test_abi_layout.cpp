// The plugin ABI's layouts, pinned: the size and alignment of every type a plugin sees, and the
// offset of every field of the standard-layout ones.
//
// A FAILURE HERE MEANS THE PLUGIN ABI CHANGED: a plugin built against the old headers would
// misread these types. Bump CK_PLUGIN_ABI_VERSION in sdk/include/ck/plugin.hpp (which also
// bumps libcksdk's SOVERSION), then update the numbers in `pinned` below (the failure messages
// print the new ones) and the version row at its top. Appending a field at the end of
// ck_plugin_descriptor is the one change that needs no bump: the host checks struct_size.
//
// The numbers are for x86-64 Linux with libstdc++'s cxx11 ABI (the supported toolchain); the
// test skips elsewhere.
#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <string>
#include <type_traits>

#include "ck/context.hpp"
#include "ck/error.hpp"
#include "ck/mapped_file.hpp"
#include "ck/metadata.hpp"
#include "ck/model.hpp"
#include "ck/options.hpp"
#include "ck/output.hpp"
#include "ck/plugin.hpp"
#include "ck/stage.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_abi_layout {

namespace {

struct Row {
    const char* what;
    std::size_t actual;
    std::size_t expected;
};

// clang-format off
#define CK_SIZE(T, n) {"sizeof(" #T ")", sizeof(T), n}
#define CK_ALIGN(T, n) {"alignof(" #T ")", alignof(T), n}
#define CK_OFFSET(T, field, n) {"offsetof(" #T ", " #field ")", offsetof(T, field), n}
#define CK_STANDARD_LAYOUT(T, n) {"is_standard_layout<" #T ">", std::is_standard_layout_v<T>, n}

// THE PINNED NUMBERS: one row per number; edit the last argument.
const Row pinned[] = {
    {"CK_PLUGIN_ABI_VERSION (the version these numbers describe)", CK_PLUGIN_ABI_VERSION, 6},

    // The C structs of ck/plugin.hpp.
    CK_SIZE(ck_plugin_descriptor, 128),
    CK_ALIGN(ck_plugin_descriptor, 8),
    CK_OFFSET(ck_plugin_descriptor, abi_version, 0),
    CK_OFFSET(ck_plugin_descriptor, struct_size, 4),
    CK_OFFSET(ck_plugin_descriptor, flags, 8),
    CK_OFFSET(ck_plugin_descriptor, toolchain, 16),
    CK_OFFSET(ck_plugin_descriptor, stages, 32),
    CK_OFFSET(ck_plugin_descriptor, name, 40),
    CK_OFFSET(ck_plugin_descriptor, version, 48),
    CK_OFFSET(ck_plugin_descriptor, summary, 56),
    CK_OFFSET(ck_plugin_descriptor, options, 64),
    CK_OFFSET(ck_plugin_descriptor, option_count, 72),
    CK_OFFSET(ck_plugin_descriptor, probe, 80),
    CK_OFFSET(ck_plugin_descriptor, create_reader, 88),
    CK_OFFSET(ck_plugin_descriptor, create_transform, 96),
    CK_OFFSET(ck_plugin_descriptor, create_writer, 104),
    CK_OFFSET(ck_plugin_descriptor, kernel_variant, 112),
    CK_OFFSET(ck_plugin_descriptor, examples, 120),

    CK_SIZE(ck_plugin_toolchain, 16),
    CK_ALIGN(ck_plugin_toolchain, 4),
    CK_OFFSET(ck_plugin_toolchain, stdlib, 0),
    CK_OFFSET(ck_plugin_toolchain, stdlib_abi, 4),
    CK_OFFSET(ck_plugin_toolchain, compiler, 8),
    CK_OFFSET(ck_plugin_toolchain, compiler_major, 12),

    CK_SIZE(ck_option_descriptor, 40),
    CK_ALIGN(ck_option_descriptor, 8),
    CK_OFFSET(ck_option_descriptor, name, 0),
    CK_OFFSET(ck_option_descriptor, stages, 8),
    CK_OFFSET(ck_option_descriptor, default_value, 16),
    CK_OFFSET(ck_option_descriptor, choices, 24),
    CK_OFFSET(ck_option_descriptor, help, 32),

    // Standard-layout C++ structs with public fields: size, alignment and every field. (Should
    // one stop being standard-layout, offsetof is no longer allowed: keep size and alignment.)
    CK_STANDARD_LAYOUT(ck::TensorInfo, 1),
    CK_SIZE(ck::TensorInfo, 120),
    CK_ALIGN(ck::TensorInfo, 8),
    CK_OFFSET(ck::TensorInfo, name, 0),
    CK_OFFSET(ck::TensorInfo, type, 32),
    CK_OFFSET(ck::TensorInfo, ne, 40),
    CK_OFFSET(ck::TensorInfo, nbytes, 64),
    CK_OFFSET(ck::TensorInfo, source_offset, 72),
    CK_OFFSET(ck::TensorInfo, stored_type, 80),
    CK_OFFSET(ck::TensorInfo, stored_bytes, 112),

    CK_STANDARD_LAYOUT(ck::ModelHeader, 1),
    CK_SIZE(ck::ModelHeader, 192),
    CK_ALIGN(ck::ModelHeader, 8),
    CK_OFFSET(ck::ModelHeader, source, 0),
    CK_OFFSET(ck::ModelHeader, format, 32),
    CK_OFFSET(ck::ModelHeader, metadata, 64),
    CK_OFFSET(ck::ModelHeader, tensors, 144),
    CK_OFFSET(ck::ModelHeader, format_facts, 168),

    // Classes with private members (and ck::Error, which has virtual functions): size and
    // alignment.
    CK_SIZE(ck::Metadata, 80),
    CK_ALIGN(ck::Metadata, 8),
    CK_SIZE(ck::Value, 96),
    CK_ALIGN(ck::Value, 8),
    CK_SIZE(ck::ArrayValue, 48),
    CK_ALIGN(ck::ArrayValue, 8),
    CK_SIZE(ck::Options, 48),
    CK_ALIGN(ck::Options, 8),
    CK_SIZE(ck::TensorView, 40),
    CK_ALIGN(ck::TensorView, 8),
    CK_SIZE(ck::TensorAllocation, 56),
    CK_ALIGN(ck::TensorAllocation, 8),
    CK_SIZE(ck::Context, 8),
    CK_ALIGN(ck::Context, 8),
    CK_SIZE(ck::RecordingContext, 240),
    CK_ALIGN(ck::RecordingContext, 8),
    CK_SIZE(ck::MappedFile, 80),
    CK_ALIGN(ck::MappedFile, 8),
    CK_SIZE(ck::Error, 136),
    CK_ALIGN(ck::Error, 8),
    CK_SIZE(ck::OutputSet, 64),
    CK_ALIGN(ck::OutputSet, 8),
    CK_SIZE(ck::OutputFile, 160),
    CK_ALIGN(ck::OutputFile, 8),
};
// clang-format on

#undef CK_SIZE
#undef CK_ALIGN
#undef CK_OFFSET
#undef CK_STANDARD_LAYOUT

}  // namespace

BOOST_AUTO_TEST_SUITE(abi_layout)

BOOST_AUTO_TEST_CASE(every_type_a_plugin_sees_has_its_pinned_layout) {
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBCXX__) && _GLIBCXX_USE_CXX11_ABI
    for (const Row& row : pinned)
        BOOST_TEST(row.actual == row.expected,
                   row.what << " is " << row.actual << ", pinned " << row.expected
                            << ": the plugin ABI changed; bump CK_PLUGIN_ABI_VERSION and update "
                               "the table in tests/unit/test_abi_layout.cpp");
#else
    BOOST_TEST_MESSAGE(
        "skipped: the layouts are pinned for x86-64 Linux with libstdc++'s cxx11 "
        "ABI");
    (void)pinned;
#endif
}

// ck::describe_plugin writes the head the host checks, and derives the stage kinds from the
// entry points given, so a descriptor cannot claim a stage it cannot create.
class DescribedWriter final : public ck::Writer {
  public:
    explicit DescribedWriter(ck::Context&) {}
    void prepare(const ck::ModelHeader&, const std::filesystem::path&) override {}
    std::vector<std::filesystem::path> outputs() const override { return {}; }
    void begin(ck::OutputSink&) override {}
    void write(std::size_t, const ck::TensorView&) override {}
    void finish() override {}
};

const ck_option_descriptor described_options[] = {
    {"a", CK_STAGE_WRITER, nullptr, nullptr, "first"},
    {"b", CK_STAGE_WRITER, nullptr, nullptr, "second"},
};

BOOST_AUTO_TEST_CASE(describe_plugin_fills_the_head_and_derives_the_stage_kinds) {
    const ck_plugin_descriptor d = ck::describe_plugin(
        {"described", "1.2.3", "a test descriptor"}, described_options,
        {.create_writer = ck::writer_factory<DescribedWriter>, .flags = CK_PLUGIN_FLAG_CONCURRENT});
    BOOST_TEST(d.abi_version == CK_PLUGIN_ABI_VERSION);
    BOOST_TEST(d.struct_size == sizeof(ck_plugin_descriptor));
    BOOST_TEST(d.flags == CK_PLUGIN_FLAG_CONCURRENT);
    const ck_plugin_toolchain here = CK_PLUGIN_TOOLCHAIN;
    BOOST_TEST(d.toolchain.stdlib == here.stdlib);
    BOOST_TEST(d.toolchain.stdlib_abi == here.stdlib_abi);
    BOOST_TEST(d.toolchain.compiler_major == here.compiler_major);
    BOOST_TEST(d.stages == CK_STAGE_WRITER);
    BOOST_TEST(std::string(d.name) == "described");
    BOOST_TEST(d.option_count == 2u);
    BOOST_TEST(d.options == described_options);
    BOOST_TEST(!d.probe);
    BOOST_TEST(!d.create_reader);
    BOOST_TEST(!d.create_transform);
    BOOST_TEST(!d.kernel_variant);
    BOOST_TEST(!d.examples);
    const ck_plugin_descriptor shown = ck::describe_plugin(
        {"described", "1.2.3", "a test descriptor", "gguf:described in.gguf out"},
        described_options, {.create_writer = ck::writer_factory<DescribedWriter>});
    BOOST_TEST(std::string(shown.examples) == "gguf:described in.gguf out");

    ck::RecordingContext context;
    std::unique_ptr<ck::Writer> writer(d.create_writer(ck::Options(), context));
    BOOST_TEST(dynamic_cast<DescribedWriter*>(writer.get()) != nullptr);

    const ck_plugin_descriptor none = ck::describe_plugin({"bare", "0", "no options"}, {});
    BOOST_TEST(none.stages == 0u);
    BOOST_TEST(none.option_count == 0u);
    BOOST_TEST(none.flags == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_abi_layout
