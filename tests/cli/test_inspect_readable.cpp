// `ckhost inspect` as people read it (issue 16): aligned tables, element and parameter counts,
// long values cut (whole with --kv), file types by name, shapes as the file states them,
// repacked tensors named, and a reason on every file it cannot read. Real files, real output.
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ck/support/little_endian.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_inspect_readable {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;

namespace {

std::string sample() {
    return cktest::sample_model().string();
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// The lines of the table whose header line starts with `header` (up to the next line that is
// not indented by two spaces).
std::vector<std::string> table(const std::string& out, const std::string& header) {
    std::vector<std::string> rows;
    bool in = false;
    for (const std::string& line : lines_of(out)) {
        if (!in) {
            in = line.starts_with(header);
            if (in) rows.push_back(line);
            continue;
        }
        if (!line.starts_with("  ")) break;
        rows.push_back(line);
    }
    return rows;
}

// The row of `rows` whose first cell is `name`.
std::string row(const std::vector<std::string>& rows, const std::string& name) {
    for (const std::string& r : rows)
        if (r.starts_with("  " + name + " ")) return r;
    return {};
}

// Every column named in the header line starts at the same place in every row (a cell is
// left-aligned under its header, or right-aligned to its end for numbers).
void check_aligned(const std::vector<std::string>& rows, const std::vector<std::string>& left,
                   const std::vector<std::string>& right) {
    BOOST_TEST_REQUIRE(rows.size() > 1u);
    const std::string& header = rows.front();
    for (const std::string& column : left) {
        const std::size_t at = header.find(column);
        BOOST_TEST_REQUIRE(at != std::string::npos, column);
        for (std::size_t i = 1; i < rows.size(); ++i) {
            BOOST_TEST(rows[i].size() > at, rows[i]);
            if (rows[i].size() <= at) continue;
            BOOST_TEST((rows[i][at - 1] == ' ' && rows[i][at] != ' '),
                       "column '" << column << "' is not aligned in:\n"
                                  << header << "\n"
                                  << rows[i]);
        }
    }
    for (const std::string& column : right) {
        const std::size_t end = header.find(column) + column.size();
        for (std::size_t i = 1; i < rows.size(); ++i)
            BOOST_TEST((rows[i].size() >= end && rows[i][end - 1] != ' ' &&
                        (rows[i].size() == end || rows[i][end] == ' ')),
                       "column '" << column << "' is not right-aligned in:\n"
                                  << header << "\n"
                                  << rows[i]);
    }
}

nlohmann::json inspect_json(const std::string& file) {
    auto r = cktest::run_ckhost({"inspect", file, "--json", "--tensors"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    return nlohmann::json::parse(r.out);
}

// The tensors' shapes as a safetensors file's own header states them.
nlohmann::json safetensors_header(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    char length[8] = {};
    in.read(length, 8);
    const auto size = ck::le::load<std::uint64_t>(length);
    std::string text(size, '\0');
    in.read(text.data(), static_cast<std::streamsize>(size));
    return nlohmann::json::parse(text);
}

std::string shape_text(const nlohmann::json& shape) {
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        out += (i ? ", " : "") + std::to_string(shape[i].get<std::int64_t>());
    return out + "]";
}

cktest::RunResult convert(const std::string& pipeline, const std::string& in, const fs::path& out) {
    return cktest::run_ckhost({"-q", "--pipeline", pipeline, "-i", in, "-o", out.string()});
}

// The sample converted with `pipeline` to `out`, then `inspect --tensors` of the result.
std::string converted_and_inspected(const std::string& pipeline, const fs::path& out) {
    auto r = convert(pipeline, sample(), out);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = cktest::run_ckhost({"inspect", out.string(), "--tensors"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    return r.out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(inspect_readable)

BOOST_AUTO_TEST_CASE(metadata_is_an_aligned_table_with_file_type_by_name) {
    auto r = cktest::run_ckhost({"inspect", sample()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto rows = table(r.out, "  key ");
    BOOST_TEST(rows.size() == 25u, r.out);  // the header and 24 keys
    check_aligned(rows, {"type", "value"}, {});
    BOOST_TEST(contains(row(rows, "general.file_type"), " u32 "), r.out);
    BOOST_TEST(contains(row(rows, "general.file_type"), "15 (MOSTLY_Q4_K_M)"), r.out);
    BOOST_TEST(contains(row(rows, "general.architecture"), "\"llama\""), r.out);
    BOOST_TEST(contains(row(rows, "tokenizer.ggml.tokens"), "arr[str]"), r.out);
    BOOST_TEST(contains(row(rows, "tokenizer.ggml.tokens"), "1,024 items [\"<unk>\", \"<s>\""),
               r.out);
    for (const std::string& line : lines_of(r.out))
        BOOST_TEST(line.size() <= 200u, "an overlong line: " << line);
}

BOOST_AUTO_TEST_CASE(element_counts_and_total_parameters) {
    const auto doc = inspect_json(sample());
    std::uint64_t total = 0, embd = 0;
    for (const auto& t : doc["tensors"]) {
        std::uint64_t n = 1;
        for (const auto& d : t["shape"]) n *= d.get<std::uint64_t>();
        total += n;
        if (t["name"] == "token_embd.weight") embd = n;
    }
    BOOST_TEST(doc["parameters"].get<std::uint64_t>() == total);
    BOOST_TEST(total == 2'098'432u);  // 2 layers of 256 wide, a vocabulary of 1024

    auto r = cktest::run_ckhost({"inspect", sample(), "--tensors"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "tensors: 21, 2,098,432 parameters (2.10 M), 1.3 MiB"), r.out);
    const auto types = table(r.out, "  type ");
    check_aligned(types, {"type"}, {"tensors", "elements", "bytes"});
    BOOST_TEST(contains(row(types, "q6_K"), " 3 "), r.out);

    const auto tensors = table(r.out, "  name ");
    BOOST_TEST(tensors.size() == 22u, r.out);
    check_aligned(tensors, {"type", "shape"}, {"elements", "bytes", "offset"});
    const std::string t = row(tensors, "token_embd.weight");
    BOOST_TEST(contains(t, " q4_K "), t);
    BOOST_TEST(contains(t, "[256, 1024]"), t);  // GGUF: ggml's ne order, as gguf-dump shows it
    BOOST_TEST(contains(t, " 262,144 "), t);
    BOOST_TEST(embd == 262'144u);
    BOOST_TEST(contains(r.out, "shape in ggml's ne order, innermost first"), r.out);
}

BOOST_AUTO_TEST_CASE(a_long_string_is_cut_and_kv_shows_it_whole) {
    cktest::TempDir dir;
    // 5000 characters, the size of a real chat template, and a line break in the middle.
    std::string text(2500, 'a');
    text += std::string(2500, 'b');
    auto r = convert("gguf:meta[set=tokenizer.chat_template=str:" + text + "]:gguf", sample(),
                     dir / "t.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = cktest::run_ckhost({"inspect", (dir / "t.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const std::string line = row(table(r.out, "  key "), "tokenizer.chat_template");
    BOOST_TEST(contains(line, "\"aaaa"), line);
    BOOST_TEST(!contains(line, "bbb"), line);
    BOOST_TEST(contains(line, "\"... (5,000 bytes; --kv tokenizer.chat_template shows all of it)"),
               line);
    BOOST_TEST(line.size() < 200u, line);

    r = cktest::run_ckhost(
        {"inspect", (dir / "t.gguf").string(), "--kv", "tokenizer.chat_template"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(r.out == text + "\n");  // as it is: no quotes, nothing cut
}

BOOST_AUTO_TEST_CASE(a_real_chat_template, *utf::precondition(cktest::SharedDataPresent())) {
    const std::string file = (*cktest::shared_data() / "vocab-150k.gguf").string();
    auto r = cktest::run_ckhost({"inspect", file});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto rows = table(r.out, "  key ");
    check_aligned(rows, {"type", "value"}, {});
    const std::string line = row(rows, "tokenizer.chat_template");
    BOOST_TEST(contains(line, "bytes; --kv tokenizer.chat_template shows all of it)"), line);
    BOOST_TEST(contains(row(rows, "tokenizer.ggml.merges"), "151,387 items"), r.out);
    BOOST_TEST(contains(row(rows, "general.file_type"), "0 (ALL_F32)"), r.out);

    auto full = cktest::run_ckhost({"inspect", file, "--kv", "tokenizer.chat_template"});
    BOOST_TEST_REQUIRE(full.exit_code == 0, full.err);
    BOOST_TEST(full.out.size() > 1000u);
    BOOST_TEST(contains(full.out, "{%- set default_system = \"You are a helpful assistant."),
               full.out.substr(0, 200));
    BOOST_TEST(std::count(full.out.begin(), full.out.end(), '\n') > 5);  // real line breaks
}

BOOST_AUTO_TEST_CASE(tiny_llama_parameters, *utf::precondition(cktest::SharedDataPresent())) {
    const std::string file = (*cktest::shared_data() / "tiny-llama-q4_k_m.gguf").string();
    auto r = cktest::run_ckhost({"inspect", file, "--tensors"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "tensors: 39, 19,532,032 parameters (19.53 M), 12.6 MiB"), r.out);
    const auto tensors = table(r.out, "  name ");
    check_aligned(tensors, {"type", "shape"}, {"elements", "bytes", "offset"});
    BOOST_TEST(contains(row(tensors, "output.weight"), "[256, 32000]  8,192,000"), r.out);
}

// safetensors states [out, in]; ckhost keeps ggml's ne [in, out] inside, and inspect shows the
// file's order (it showed the reverse before issue 16).
BOOST_AUTO_TEST_CASE(safetensors_shapes_as_the_file_states_them) {
    cktest::TempDir dir;
    const std::string out =
        converted_and_inspected("gguf:dequant:safetensors", dir / "m.safetensors");
    const auto header = safetensors_header(dir / "m.safetensors");
    BOOST_TEST(contains(out, "shape as the file states it, outermost first"), out);
    const auto tensors = table(out, "  name ");
    BOOST_TEST(tensors.size() == 22u, out);
    check_aligned(tensors, {"type", "shape"}, {"elements", "bytes", "offset"});
    for (const auto& [name, entry] : header.items()) {
        if (name == "__metadata__") continue;
        const std::string line = row(tensors, name);
        BOOST_TEST(contains(line, " " + shape_text(entry["shape"]) + " "),
                   name << ": the file says " << entry["shape"].dump() << "; inspect: " << line);
    }
    BOOST_TEST(shape_text(header["blk.0.ffn_down.weight"]["shape"]) == "[256, 768]");
    BOOST_TEST(contains(row(tensors, "blk.0.ffn_down.weight"), "[256, 768]"));
    // The same parameters as the GGUF it came from.
    BOOST_TEST(contains(out, "2,098,432 parameters"), out);
}

BOOST_AUTO_TEST_CASE(repacked_tensors_are_named_for_what_they_hold) {
    cktest::TempDir dir;
    std::string out =
        converted_and_inspected("gguf:dequant:repack[to=nf4]:safetensors", dir / "nf4.safetensors");
    const auto tensors = table(out, "  name ");
    check_aligned(tensors, {"type", "shape"}, {"elements", "bytes", "offset"});
    const std::string codes = row(tensors, "blk.0.ffn_down.weight");
    // Only the rows of repacked tensors have something under "holds".
    const std::size_t holds = tensors.front().find("holds");
    BOOST_TEST_REQUIRE(holds != std::string::npos, tensors.front());
    BOOST_TEST(codes.substr(holds).starts_with("NF4 codes"), codes);
    // [768 in, 256 out] as NF4: 256 rows of 384 bytes, 196,608 values.
    BOOST_TEST(contains(codes, " nf4 "), codes);
    BOOST_TEST(!contains(codes, " i8 "), codes);
    BOOST_TEST(contains(codes, "[256, 384]"), codes);
    BOOST_TEST(contains(codes, " 196,608 "), codes);
    BOOST_TEST(contains(codes, "scales blk.0.ffn_down.weight.absmax"), codes);
    const std::string scales = row(tensors, "blk.0.ffn_down.weight.absmax");
    BOOST_TEST(contains(scales, " f16 "), scales);
    BOOST_TEST(contains(scales, "[3072]"), scales);
    BOOST_TEST(contains(scales, "absmax per 64 values of blk.0.ffn_down.weight"), scales);
    // Codes count as the weights they encode, scales not at all: the model's own count.
    BOOST_TEST(contains(out, "2,098,432 parameters"), out);
    BOOST_TEST(contains(row(table(out, "  type "), "nf4"), "nf4"), out);

    out = converted_and_inspected("gguf:repack[to=int8]:safetensors", dir / "int8.safetensors");
    const std::string int8 = row(table(out, "  name "), "blk.0.ffn_down.weight");
    BOOST_TEST(contains(int8, " int8 "), int8);
    BOOST_TEST(contains(int8, "[256, 768]"), int8);
    BOOST_TEST(contains(int8, "min/max blk.0.ffn_down.weight.minmax"), int8);
    BOOST_TEST(contains(out, "2,098,432 parameters"), out);
}

BOOST_AUTO_TEST_CASE(gguflite_shapes_as_the_file_states_them) {
    cktest::TempDir dir;
    const std::string out = converted_and_inspected("gguf:gguflite", dir / "m.gguflite");
    const auto tensors = table(out, "  name ");
    check_aligned(tensors, {"type", "shape"}, {"elements", "bytes", "offset"});
    BOOST_TEST(contains(row(tensors, "token_embd.weight"), "[1024, 256]"), out);
    BOOST_TEST(contains(out, "2,098,432 parameters"), out);
}

BOOST_AUTO_TEST_CASE(every_open_failure_says_why) {
    cktest::TempDir dir;
    auto r = cktest::run_ckhost({"inspect", (dir / "absent.gguf").string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "absent.gguf: cannot open the file: No such file or directory"),
               r.err);
    r = cktest::run_ckhost({"verify", dir.path().string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "cannot open the file: Is a directory"), r.err);
    r = cktest::run_ckhost({"inspect", (dir / "absent" / "x.gguf").string()});
    BOOST_TEST(contains(r.err, "No such file or directory"), r.err);
    BOOST_TEST(r.out.empty());
}

// Root reads any file, so the check runs as nobody (setpriv) when the tests run as root.
BOOST_AUTO_TEST_CASE(permission_denied) {
    cktest::TempDir dir;
    fs::permissions(dir.path(), fs::perms::all, fs::perm_options::add);
    fs::copy_file(sample(), dir / "locked.gguf");
    fs::copy_file(sample(), dir / "open.gguf");
    fs::permissions(dir / "locked.gguf", fs::perms::none);
    fs::permissions(dir / "open.gguf", fs::perms::all);
    std::vector<std::string> prefix;
    if (::geteuid() == 0) prefix = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
    const auto run = [&](const fs::path& file) {
        std::vector<std::string> args = prefix;
        args.insert(args.end(), {cktest::ckhost_binary().string(), "inspect", file.string()});
        return cktest::run_program(args.front(), {args.begin() + 1, args.end()});
    };
    if (auto readable = run(dir / "open.gguf"); readable.exit_code != 0) {
        BOOST_TEST_MESSAGE("skipped: ckhost does not run as nobody here: " << readable.err);
        return;
    }
    auto r = run(dir / "locked.gguf");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "locked.gguf: cannot open the file: Permission denied"), r.err);
}

BOOST_AUTO_TEST_CASE(a_file_of_no_known_format_is_called_that) {
    cktest::TempDir dir;
    cktest::write_file(dir / "notes.txt", {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'});
    for (const char* command : {"inspect", "verify"}) {
        auto r = cktest::run_ckhost({command, (dir / "notes.txt").string()});
        BOOST_TEST(r.exit_code == 1);
        BOOST_TEST(contains(r.err,
                            "notes.txt: not a bump, gguf, gguflite, hf or safetensors file: no "
                            "reader plugin recognises it; it starts with 68 65 6c 6c 6f "
                            "20 77 6f (\"hello wo\")"),
                   r.err);
        BOOST_TEST(!contains(r.err, "expected 'GGUF'"), r.err);
    }
    // What the GGUF reader explains best stays its own: empty files, damaged GGUF magics.
    cktest::write_file(dir / "empty.gguf", {});
    auto r = cktest::run_ckhost({"inspect", (dir / "empty.gguf").string()});
    BOOST_TEST(contains(r.err, "empty file"), r.err);
    cktest::write_file(dir / "lower.gguf", {'g', 'g', 'u', 'f', 3, 0, 0, 0, 0, 0, 0, 0});
    r = cktest::run_ckhost({"inspect", (dir / "lower.gguf").string()});
    BOOST_TEST(contains(r.err, "magic"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_inspect_readable
