// Big-endian GGUF: files gguf-py's gguf_convert_endian.py made read as their little-endian
// sources, `gguf[endian=big]` writes what the script writes, and big then little gives back the
// input byte for byte. Tensors of types the script does not convert are refused by name.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/endian/conversion.hpp>
#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "gguf_endian.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_gguf_endian {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;

namespace {

const std::string to_big = "gguf:gguf[endian=big]";
const std::string to_little = "gguf:gguf";  // little is the default

fs::path committed(const std::string& name) {
    return cktest::test_data() / "bigendian" / name;
}

cktest::RunResult convert(const std::string& pipeline, const fs::path& in, const fs::path& out) {
    return cktest::run_ckhost({"--pipeline", pipeline, "-i", in.string(), "-o", out.string()});
}

void convert_ok(const std::string& pipeline, const fs::path& in, const fs::path& out) {
    const auto r = convert(pipeline, in, out);
    BOOST_TEST_REQUIRE(r.exit_code == 0, pipeline << " " << in << ": " << r.err);
}

std::string fact(const ck::ModelHeader& header, const std::string& key) {
    for (const auto& [k, v] : header.format_facts)
        if (k == key) return v;
    return "(none)";
}

// A file opened in process; the reader must outlive the views it hands out.
struct Opened {
    explicit Opened(const fs::path& path) : header(reader.open(path)) {}
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader{context};
    ck::ModelHeader header;

    std::optional<std::size_t> tensor_index(const std::string& name) const {
        for (std::size_t i = 0; i < header.tensors.size(); ++i)
            if (header.tensors[i].name == name) return i;
        return std::nullopt;
    }
};

// The first tensor, in header order, whose type gguf_convert_endian.py does not convert.
std::optional<ck::TensorInfo> first_unconvertible(const ck::ModelHeader& header) {
    for (const ck::TensorInfo& t : header.tensors)
        if (!ckplugin::gguf::find_swap_rule(t.type)) return t;
    return std::nullopt;
}

// `in` to big-endian and back gives `expected` (the input itself unless said otherwise); the
// big-endian file is a different file that reads as big-endian.
void check_round_trip(const fs::path& in, const fs::path& expected) {
    cktest::TempDir dir;
    convert_ok(to_big, in, dir / "big.gguf");
    convert_ok(to_little, dir / "big.gguf", dir / "little.gguf");
    BOOST_TEST(cktest::files_equal(expected, dir / "little.gguf"),
               in << ": big then little does not give back " << expected);
    BOOST_TEST(!cktest::files_equal(in, dir / "big.gguf"), in << ": big-endian copy is the same");
    BOOST_TEST(fact(Opened(dir / "big.gguf").header, "byte order") == "big-endian");
}
void check_round_trip(const fs::path& in) {
    check_round_trip(in, in);
}

// A big-endian file, little then big, gives back itself.
void check_big_round_trip(const fs::path& in) {
    cktest::TempDir dir;
    convert_ok(to_little, in, dir / "little.gguf");
    convert_ok(to_big, dir / "little.gguf", dir / "big.gguf");
    BOOST_TEST(cktest::files_equal(in, dir / "big.gguf"),
               in << ": little then big does not give back the input");
}

// `pipeline` refuses `in` before writing: exit 1, one line naming `tensor` and its type,
// nothing left in the output folder.
void check_refusal(const std::string& pipeline, const fs::path& in, const ck::TensorInfo& tensor) {
    cktest::TempDir dir;
    const auto r = convert(pipeline, in, dir / "out.gguf");
    BOOST_TEST(r.exit_code == 1, in << ": exit " << r.exit_code << ": " << r.err);
    BOOST_TEST(contains(r.err, "'" + tensor.name + "'"), in << ": tensor not named: " << r.err);
    BOOST_TEST(contains(r.err, "type " + std::string(ck::type_name(tensor.type)) + " cannot"),
               in << ": type not named: " << r.err);
    // One error line, and the suggested pipeline's (dequant first) when that plans.
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') ==
                   1 + contains(r.err, "\nckhost: suggestion: --pipeline 'gguf:dequant:"),
               in << ": " << r.err);
    BOOST_TEST(dir.entries().empty(), in << ": output left behind");
}

bool same_bytes(std::span<const std::byte> a, std::span<const std::byte> b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

// Every key of `big` is in `source` with the same type and value (scalars by their bits,
// arrays by their little-endian encoding); returns how many were compared.
std::size_t check_same_metadata(const ck::Metadata& big, const ck::Metadata& source) {
    std::size_t compared = 0;
    for (const auto& [key, v] : big) {
        const ck::Value* want = source.find(key);
        BOOST_TEST_REQUIRE(want != nullptr, key << ": not in the source");
        BOOST_TEST((v.type() == want->type()), key << ": type");
        if (v.type() != want->type()) continue;
        if (v.type() == ck::ValueType::array) {
            BOOST_TEST((v.array().element_type() == want->array().element_type()), key);
            BOOST_TEST(v.array().size() == want->array().size(), key);
            BOOST_TEST(same_bytes(v.array().encoded(), want->array().encoded()),
                       key << ": array differs");
        } else {
            BOOST_TEST(v.raw() == want->raw(), key << ": bits differ");
            BOOST_TEST(v.str() == want->str(), key << ": string differs");
        }
        ++compared;
    }
    return compared;
}

// Every tensor of `big` is in `source` under its name, with the same type, shape and bytes.
void check_same_tensors(Opened& big, Opened& source) {
    for (std::size_t i = 0; i < big.header.tensors.size(); ++i) {
        const ck::TensorInfo& t = big.header.tensors[i];
        const auto j = source.tensor_index(t.name);
        BOOST_TEST_REQUIRE(j.has_value(), t.name << ": not in the source");
        const ck::TensorInfo& s = source.header.tensors[*j];
        BOOST_TEST(t.type == s.type, t.name);
        BOOST_TEST(t.ne == s.ne, t.name);
        BOOST_TEST(same_bytes(big.reader.tensor(i).bytes(), source.reader.tensor(*j).bytes()),
                   t.name << ": bytes differ from the source's");
    }
}

// `path` as `ckhost inspect --json` sees it, without what differs between a file and its
// other-endian twin: its name and byte order.
nlohmann::json inspected(const fs::path& path) {
    const auto r = cktest::run_ckhost({"inspect", "--json", "--tensors", path.string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, path << ": " << r.err);
    auto doc = nlohmann::json::parse(r.out);
    doc.erase("file");
    doc["facts"].erase("byte_order");
    return doc;
}

// valid_base.gguf (committed) written big-endian, the twin of every malformed file below.
std::vector<unsigned char> big_valid_base(const cktest::TempDir& dir) {
    convert_ok(to_big, cktest::test_data() / "bad" / "valid_base.gguf", dir / "base.be.gguf");
    return cktest::read_file(dir / "base.be.gguf");
}

// The error open() throws for `path` (the test fails when it throws none).
ck::Error open_error(const fs::path& path) {
    try {
        Opened opened(path);
    } catch (const ck::Error& e) {
        return e;
    }
    BOOST_FAIL(path << " was read without error");
    return ck::Error("unreachable");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gguf_endian)

// Exactly the types gguf_convert_endian.py converts (its byteswap_tensors table plus the float
// types it swaps element by element), each field inside its block; everything else is refused.
BOOST_AUTO_TEST_CASE(swap_rules_are_the_scripts) {
    const std::set<std::string> script = {"f32",  "f16",   "bf16", "q4_0",  "q8_0", "q4_K",
                                          "q6_K", "tq2_0", "q1_0", "mxfp4", "nvfp4"};
    std::set<std::string> ours;
    for (const ck::TypeInfo& info : ck::type_table()) {
        const auto* rule = ckplugin::gguf::find_swap_rule(info.id);
        if (!rule) {
            const std::string why = ckplugin::gguf::swap_refusal(info.id);
            BOOST_TEST(contains(why, "type " + std::string(ck::type_name(info.id)) + " cannot"),
                       why);
            continue;
        }
        ours.insert(std::string(info.name));
        for (std::uint8_t f = 0; f < rule->count; ++f)
            BOOST_TEST(rule->offsets[f] + rule->width <= info.block_bytes, info.name);
    }
    BOOST_TEST(ours == script, boost::test_tools::per_element());
    BOOST_TEST(!ckplugin::gguf::find_swap_rule(ck::ggml_type_count));
}

// The committed files gguf_convert_endian.py made (tests/data/bigendian/README.md) read as
// their ggml-written sources: every key and every tensor byte, for every convertible type.
BOOST_AUTO_TEST_CASE(reference_files_read_as_their_sources) {
    for (const auto& [big_name, source] :
         {std::pair{"types-convertible.be.gguf", cktest::test_data() / "types" / "types.gguf"},
          std::pair{"metadata-convertible.be.gguf",
                    cktest::test_data() / "meta" / "metadata.gguf"}}) {
        BOOST_TEST_CONTEXT(big_name) {
            Opened big(committed(big_name)), little(source);
            BOOST_TEST(fact(big.header, "byte order") == "big-endian");
            BOOST_TEST(fact(little.header, "byte order") == "little-endian");
            BOOST_TEST(check_same_metadata(big.header.metadata, little.header.metadata) >= 3u);
            check_same_tensors(big, little);
        }
    }
    // Every convertible type is there, and the metadata file's every value type.
    Opened types(committed("types-convertible.be.gguf"));
    BOOST_TEST(types.header.tensors.size() == 14u);
    BOOST_TEST(Opened(committed("metadata-convertible.be.gguf")).header.metadata.size() == 51u);
}

// gguf[endian=big] writes what the script wrote, and the little-endian copy goes back and
// forth unchanged.
BOOST_AUTO_TEST_CASE(writer_reproduces_reference_files) {
    for (const char* name : {"types-convertible.be.gguf", "metadata-convertible.be.gguf"}) {
        check_big_round_trip(committed(name));
        cktest::TempDir dir;
        convert_ok(to_little, committed(name), dir / "little.gguf");
        check_round_trip(dir / "little.gguf");
    }
}

// The small committed models go big then little unchanged; those holding types the script
// cannot convert are refused by name, with nothing written.
BOOST_AUTO_TEST_CASE(round_trip_committed_models) {
    check_round_trip(cktest::test_data() / "bad" / "valid_base.gguf");
    check_round_trip(cktest::examples_dir() / "micro-llama-q4_k_m.gguf");
    for (const fs::path& in : {cktest::test_data() / "meta" / "metadata.gguf",
                               cktest::test_data() / "types" / "types.gguf"}) {
        const auto bad = first_unconvertible(Opened(in).header);
        BOOST_TEST_REQUIRE(bad.has_value());
        check_refusal(to_big, in, *bad);
    }
    // endian takes only its two values (exit 2, before anything runs).
    cktest::TempDir dir;
    const auto r = convert("gguf:gguf[endian=middle]",
                           cktest::test_data() / "bad" / "valid_base.gguf", dir / "out.gguf");
    BOOST_TEST(r.exit_code == 2, r.err);
}

// The shared ground truth: gguf_convert_endian.py's micro models, both directions.
BOOST_AUTO_TEST_CASE(shared_big_endian_models, *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    for (const std::string model : {"micro-llama-f32", "micro-llama-q4_k_m", "micro-llama-q8_0"}) {
        const fs::path big = root / "bigendian" / (model + ".be.gguf");
        const fs::path little = root / (model + ".gguf");
        cktest::TempDir dir;
        convert_ok(to_little, big, dir / "little.gguf");
        BOOST_TEST(cktest::files_equal(little, dir / "little.gguf"), model);
        convert_ok(to_big, little, dir / "big.gguf");
        BOOST_TEST(cktest::files_equal(big, dir / "big.gguf"), model);
    }
}

// Every GGUF of the shared data (but the malformed ones): big then little gives it back, or,
// when it holds a type the script cannot convert, the writer refuses it naming the tensor.
// Three conversions of every shared file: the Release suite's sweep; the sanitizer run reaches
// the same reader and writer code through shared_big_endian_models and the tests above.
BOOST_AUTO_TEST_CASE(round_trip_every_shared_gguf,
                     *utf::precondition(cktest::SharedDataPresent()) *
                         utf::precondition(cktest::NotASanitizerRun())) {
    const fs::path root = *cktest::shared_data();
    std::size_t round_trips = 0, big_inputs = 0, refused = 0, unreadable = 0;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        const fs::path& in = e.path();
        if (in.extension() != ".gguf" || contains(in.string(), "/bad/")) continue;
        BOOST_TEST_CONTEXT(in) {
            std::optional<Opened> opened;
            try {
                opened.emplace(in);
            } catch (const ck::Error& err) {  // split shards, today
                BOOST_TEST_MESSAGE(in << ": not read by the gguf reader: " << err.what());
                ++unreadable;
                continue;
            }
            if (fact(opened->header, "byte order") == "big-endian") {
                check_big_round_trip(in);
                ++big_inputs;
            } else if (const auto bad = first_unconvertible(opened->header)) {
                check_refusal(to_big, in, *bad);
                ++refused;
            } else {
                // The byte order must change nothing a plain copy keeps: a file the plain copy
                // does not reproduce (none today) is compared with that copy instead.
                cktest::TempDir dir;
                convert_ok(to_little, in, dir / "copy.gguf");
                const bool reproduced = cktest::files_equal(in, dir / "copy.gguf");
                if (!reproduced) BOOST_TEST_MESSAGE(in << ": gguf:gguf does not reproduce it");
                check_round_trip(in, reproduced ? in : dir / "copy.gguf");
                ++round_trips;
            }
        }
    }
    BOOST_TEST_MESSAGE(round_trips << " round trips, " << big_inputs << " big-endian inputs, "
                                   << refused << " refused, " << unreadable << " not readable");
    BOOST_TEST(round_trips >= 25u);
    BOOST_TEST(big_inputs == 3u);
    BOOST_TEST(refused >= 15u);
}

// `ckhost inspect` says which byte order a file has, and a big-endian file's metadata, tensor
// table and sizes read exactly as its little-endian twin's.
BOOST_AUTO_TEST_CASE(inspect_shows_byte_order) {
    const auto r = cktest::run_ckhost({"inspect", committed("types-convertible.be.gguf").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "byte order: big-endian"), r.out);
    const auto l =
        cktest::run_ckhost({"inspect", (cktest::test_data() / "bad" / "valid_base.gguf").string()});
    BOOST_TEST(contains(l.out, "byte order: little-endian"), l.out);

    cktest::TempDir dir;
    convert_ok(to_little, committed("metadata-convertible.be.gguf"), dir / "little.gguf");
    const nlohmann::json big = inspected(committed("metadata-convertible.be.gguf"));
    const nlohmann::json little = inspected(dir / "little.gguf");
    BOOST_TEST(big == little, big.dump() << "\n" << little.dump());
}

BOOST_AUTO_TEST_CASE(inspect_shared_big_endian_models,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    for (const std::string model : {"micro-llama-f32", "micro-llama-q4_k_m", "micro-llama-q8_0"}) {
        const nlohmann::json big = inspected(root / "bigendian" / (model + ".be.gguf"));
        const nlohmann::json little = inspected(root / (model + ".gguf"));
        BOOST_TEST(big == little, model << "\n" << big.dump() << "\n" << little.dump());
    }
}

// A malformed big-endian file fails exactly as its little-endian twin in bad/ does (same
// message, byte offset and subject, naming its own file): truncated anywhere, or with a count
// that cannot fit.
BOOST_AUTO_TEST_CASE(malformed_big_endian_files_fail_like_their_twins) {
    cktest::TempDir dir;
    const std::vector<unsigned char> base = big_valid_base(dir);
    std::size_t checked = 0;
    for (const auto& e : fs::directory_iterator(cktest::test_data() / "bad")) {
        const std::string name = e.path().filename().string();
        std::vector<unsigned char> twin = base;
        if (name.starts_with("trunc_")) {
            twin.resize(fs::file_size(e.path()));  // each is a prefix of valid_base.gguf
        } else if (name == "n_kv_huge.gguf" || name == "n_tensors_huge.gguf") {
            const std::size_t at = name.starts_with("n_kv") ? 16 : 8;
            const auto little = cktest::read_file(e.path());
            boost::endian::endian_store<std::uint64_t, 8, boost::endian::order::big>(
                twin.data() + at,
                boost::endian::endian_load<std::uint64_t, 8, boost::endian::order::little>(
                    little.data() + at));
        } else {
            continue;
        }
        const fs::path big = dir / ("be_" + name);
        cktest::write_file(big, twin);
        BOOST_TEST_CONTEXT(name) {
            const ck::Error want = open_error(e.path());
            const ck::Error got = open_error(big);
            BOOST_TEST(got.message() == want.message());
            BOOST_TEST((got.offset() == want.offset()));
            BOOST_TEST(got.subject() == want.subject());
            BOOST_TEST(got.file() == big.string());
        }
        ++checked;
    }
    BOOST_TEST(checked == 14u);

    // Through ckhost too: one line naming the file, the offset and the count.
    const auto r = cktest::run_ckhost({"inspect", (dir / "be_n_kv_huge.gguf").string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "be_n_kv_huge.gguf: byte 16: n_kv: key-value count"), r.err);
}

// A big-endian file holding a tensor the script could not have converted (here valid_base's
// f32 tensor 'a' retyped i32, the same size) is refused by open(), at the type field.
BOOST_AUTO_TEST_CASE(reader_refuses_unconvertible_big_endian_tensor) {
    cktest::TempDir dir;
    std::vector<unsigned char> bytes = big_valid_base(dir);
    // Tensor 'a' is the first tensor info: its name, then n_dims = 2, two dimensions, the type.
    const unsigned char name[] = {0, 0, 0, 0, 0, 0, 0, 1, 'a', 0, 0, 0, 2};
    const auto it = std::search(bytes.begin(), bytes.end(), std::begin(name), std::end(name));
    BOOST_TEST_REQUIRE((it != bytes.end()));
    const std::size_t type_at = static_cast<std::size_t>(it - bytes.begin()) + sizeof name + 16;
    BOOST_TEST_REQUIRE(bytes[type_at + 3] == 0);  // f32
    bytes[type_at + 3] = static_cast<unsigned char>(ck::GgmlType::i32);
    cktest::write_file(dir / "i32.be.gguf", bytes);

    const ck::Error e = open_error(dir / "i32.be.gguf");
    BOOST_TEST(e.subject() == "tensor 0 'a'");
    BOOST_TEST((e.offset() == std::optional<std::uint64_t>(type_at)));
    BOOST_TEST(contains(e.message(), "type i32 cannot change byte order"), e.message());

    ck::TensorInfo a;
    a.name = "a";
    a.type = static_cast<std::uint32_t>(ck::GgmlType::i32);
    check_refusal(to_little, dir / "i32.be.gguf", a);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_gguf_endian
