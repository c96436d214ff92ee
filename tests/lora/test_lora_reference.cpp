// LoRA adapters against llama.cpp's tools (../shared/testdata/lora, its README): every
// convert_lora_to_gguf.py command there replayed with `ckhost convert-lora` and the same
// arguments gives the converter's file byte for byte, and every llama-export-lora command
// replayed with `ckhost export-lora` gives its merged model byte for byte (the float32 sums in
// ggml's order: ck/kernels/lora.hpp). The refusals on the real files: each exit 1 with a message
// naming the problem, and nothing written.
#include <boost/test/unit_test.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_lora_reference {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;

namespace {

std::optional<fs::path> lora_data() {
    const auto shared = cktest::shared_data();
    if (!shared || !fs::is_directory(*shared / "lora" / "llama-bf16-lora-attn-r8"))
        return std::nullopt;
    return *shared / "lora";
}

struct LoraDataPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(lora_data().has_value());
        ok.message() << "../shared/testdata/lora is absent: skipping the llama.cpp LoRA references";
        return ok;
    }
};

// convert_lora_to_gguf.py ADAPTER --base BASE --outtype TYPE --outfile OUT, as the README ran it
// in the lora folder (BASE relative to it).
struct Conversion {
    const char* adapter;
    const char* base;
    const char* outtype;
};

const Conversion conversions[] = {
    {"llama-bf16-lora-attn-r8", "../hf/llama-bf16", "f32"},
    {"llama-bf16-lora-attn-r8", "../hf/llama-bf16", "bf16"},
    {"llama-bf16-lora-all-r4", "../hf/llama-bf16", "f32"},
    {"llama-bf16-lora-all-r4", "../hf/llama-bf16", "q8_0"},
    {"mistral-nemo-bf16-lora-r8", "../hf-arch/mistral-nemo-bf16", "f32"},
    {"mistral-nemo-bf16-lora-r16", "../hf-arch/mistral-nemo-bf16", "f32"},
    {"mistral-nemo-bf16-lora-r16", "../hf-arch/mistral-nemo-bf16", "f16"},
};

// llama-export-lora -m BASE ARGS... -o OUT -t 1 (BASE relative to the lora folder).
struct Export {
    const char* base;
    std::vector<std::string> adapters;
    const char* merged;
};

const Export exports[] = {
    {"../hf/llama-bf16.f16.gguf",
     {"--lora", "llama-bf16-lora-all-r4.f32.gguf"},
     "llama-bf16.f16.merged-all-r4.gguf"},
    {"mistral-nemo-bf16.f16.gguf",
     {"--lora", "mistral-nemo-bf16-lora-r8.f32.gguf"},
     "mistral-nemo-bf16.f16.merged-r8.gguf"},
    {"mistral-nemo-bf16.f16.gguf",
     {"--lora-scaled", "mistral-nemo-bf16-lora-r8.f32.gguf:0.5"},
     "mistral-nemo-bf16.f16.merged-r8-x0.5.gguf"},
    {"mistral-nemo-bf16.f16.gguf",
     {"--lora", "mistral-nemo-bf16-lora-r8.f32.gguf,mistral-nemo-bf16-lora-r16.f16.gguf"},
     "mistral-nemo-bf16.f16.merged-r8-r16.gguf"},
};

// Runs ckhost from the lora folder, as the README's commands were run, with these arguments.
cktest::RunResult run_in_lora_folder(std::vector<std::string> args) {
    const fs::path previous = fs::current_path();
    fs::current_path(*lora_data());
    cktest::RunResult r = cktest::run_ckhost(args);
    fs::current_path(previous);
    return r;
}

std::string file_name(const Conversion& c) {
    return std::string(c.adapter) + "." + c.outtype + ".gguf";
}

// Runs ckhost with TMPDIR set to `tmp`, where a lora stage converts PEFT folders (the folder it
// makes there must be gone afterwards).
cktest::RunResult run_with_tmpdir(const fs::path& tmp, std::vector<std::string> args) {
    const char* was = std::getenv("TMPDIR");
    const std::string previous = was ? was : "";
    ::setenv("TMPDIR", tmp.c_str(), 1);
    cktest::RunResult r = run_in_lora_folder(std::move(args));
    if (was)
        ::setenv("TMPDIR", previous.c_str(), 1);
    else
        ::unsetenv("TMPDIR");
    return r;
}

// A copy of adapter folder `name` in `into` whose adapter_config.json has `from` replaced by `to`.
fs::path edited_adapter(const fs::path& into, const std::string& name, const std::string& from,
                        const std::string& to) {
    const fs::path copy = into / name;
    fs::create_directories(copy);
    for (const char* file : {"adapter_config.json", "adapter_model.safetensors"})
        fs::copy_file(*lora_data() / name / file, copy / file);
    std::ifstream in(copy / "adapter_config.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    const std::size_t at = text.find(from);
    BOOST_TEST_REQUIRE(at != std::string::npos, from);
    text.replace(at, from.size(), to);
    fs::permissions(copy / "adapter_config.json", fs::perms::owner_write, fs::perm_options::add);
    std::ofstream(copy / "adapter_config.json", std::ios::trunc) << text;
    return copy;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lora_reference)

// lora[adapter=FOLDER] takes PEFT folders: converted first (the base's config.json from the
// checkpoint read, or base=), the merge is the GGUF adapter's, byte for byte: with export_lora,
// llama-export-lora's own files; mixed with GGUF adapters in one list; nothing left in TMPDIR.
BOOST_AUTO_TEST_CASE(peft_folders_in_the_lora_stage, *utf::precondition(LoraDataPresent())) {
    cktest::TempDir out, tmp;
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--pipeline",
          "gguf:lora[adapter=llama-bf16-lora-all-r4,base=../hf/llama-bf16,export_lora]:gguf", "-i",
          "../hf/llama-bf16.f16.gguf"},
         "llama-bf16.f16.merged-all-r4.gguf"},
        {{"--pipeline",
          "gguf:lora[adapter={mistral-nemo-bf16-lora-r8,mistral-nemo-bf16-lora-r16.f16.gguf},"
          "base=../hf-arch/mistral-nemo-bf16,export_lora]:gguf",
          "-i", "mistral-nemo-bf16.f16.gguf"},
         "mistral-nemo-bf16.f16.merged-r8-r16.gguf"},
    };
    for (const auto& [args, merged] : cases) {
        std::vector<std::string> command = args;
        command.insert(command.end(), {"-o", (out / merged).string()});
        const auto r = run_with_tmpdir(tmp.path(), command);
        BOOST_TEST_REQUIRE(r.exit_code == 0, merged << ": " << r.err);
        BOOST_TEST(cktest::files_equal(out / merged, *lora_data() / merged), merged);
        BOOST_TEST(tmp.entries().empty());
    }
    // The checkpoint read by hf is the base: the same bytes as the converter's adapter file.
    for (const char* adapter : {"llama-bf16-lora-all-r4", "llama-bf16-lora-all-r4.f32.gguf"}) {
        const auto r = run_with_tmpdir(
            tmp.path(),
            {"--pipeline", std::string("hf:lora[adapter=") + adapter + "]:gguf", "-i",
             "../hf/llama-bf16", "-o", (out / (std::string(adapter) + ".out")).string()});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    }
    BOOST_TEST(cktest::files_equal(out / "llama-bf16-lora-all-r4.out",
                                   out / "llama-bf16-lora-all-r4.f32.gguf.out"));
    BOOST_TEST(tmp.entries().empty());
}

// A GGUF base without base=: the adapter's base_model_name_or_path is no local folder, so the
// conversion cannot know the model; exit 1 naming the key and base=, nothing written or left.
BOOST_AUTO_TEST_CASE(peft_folder_without_its_base_is_refused,
                     *utf::precondition(LoraDataPresent())) {
    cktest::TempDir out, tmp;
    const auto r = run_with_tmpdir(
        tmp.path(), {"--pipeline", "gguf:lora[adapter=llama-bf16-lora-all-r4]:gguf", "-i",
                     "../hf/llama-bf16.f16.gguf", "-o", (out / "merged.gguf").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "base_model_name_or_path"), r.err);
    BOOST_TEST(contains(r.err, "give base=FOLDER"), r.err);
    BOOST_TEST(out.entries().empty());
    BOOST_TEST(tmp.entries().empty());
}

// use_rslora: the pipeline merges as PEFT scales (lora_alpha / sqrt(r)), which is the merge of
// `convert-lora --peft-scale`'s adapter, not the converter's (lora_alpha / r).
BOOST_AUTO_TEST_CASE(the_lora_stage_honours_use_rslora, *utf::precondition(LoraDataPresent())) {
    cktest::TempDir out, tmp;
    const fs::path adapter = edited_adapter(out.path(), "llama-bf16-lora-all-r4",
                                            "\"use_rslora\": false", "\"use_rslora\": true");
    for (const char* flag : {"--peft-scale", ""}) {
        std::vector<std::string> args = {
            "convert-lora", adapter.string(),
            "--base",       "../hf/llama-bf16",
            "--outfile",    (out / (std::string("a") + flag + ".gguf")).string()};
        if (*flag) args.push_back(flag);
        BOOST_TEST_REQUIRE(run_in_lora_folder(args).exit_code == 0);
    }
    const auto merge = [&](const std::string& adapter_path, const std::string& name) {
        const auto r = run_with_tmpdir(
            tmp.path(), {"--pipeline", "gguf:lora[adapter=" + adapter_path + "]:gguf", "-i",
                         "../hf/llama-bf16.f16.gguf", "-o", (out / name).string()});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        return r;
    };
    const auto folder = merge(adapter.string() + ",base=../hf/llama-bf16", "folder.gguf");
    BOOST_TEST(!contains(folder.err, "use_rslora"), folder.err);
    merge((out / "a--peft-scale.gguf").string(), "peft-scale.gguf");
    merge((out / "a.gguf").string(), "converter.gguf");
    BOOST_TEST(cktest::files_equal(out / "folder.gguf", out / "peft-scale.gguf"));
    BOOST_TEST(!cktest::files_equal(out / "folder.gguf", out / "converter.gguf"));
    BOOST_TEST(tmp.entries().empty());
}

BOOST_AUTO_TEST_CASE(convert_lora_gives_the_converters_files,
                     *utf::precondition(LoraDataPresent())) {
    cktest::TempDir out;
    for (const Conversion& c : conversions) {
        const fs::path target = out / file_name(c);
        const auto r = run_in_lora_folder({"convert-lora", c.adapter, "--base", c.base, "--outtype",
                                           c.outtype, "--outfile", target.string()});
        BOOST_TEST_REQUIRE(r.exit_code == 0, file_name(c) << ": " << r.err);
        BOOST_TEST(cktest::files_equal(target, *lora_data() / file_name(c)), file_name(c));
    }
}

// The converter's Q8_0 falls back to F16 for rows of r values (lora_b), and says so.
BOOST_AUTO_TEST_CASE(q8_0_falls_back_to_f16_with_a_warning, *utf::precondition(LoraDataPresent())) {
    cktest::TempDir out;
    const auto r =
        run_in_lora_folder({"convert-lora", "llama-bf16-lora-all-r4", "--base", "../hf/llama-bf16",
                            "--outtype", "q8_0", "--outfile", (out / "a.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err,
                        "tensor 'blk.0.attn_q.weight.lora_b': can't quantize tensor with "
                        "shape (256, 4) to Q8_0, falling back to F16"),
               r.err);
}

BOOST_AUTO_TEST_CASE(export_lora_gives_llama_export_loras_files,
                     *utf::precondition(LoraDataPresent())) {
    cktest::TempDir out;
    for (const Export& e : exports) {
        const fs::path target = out / e.merged;
        std::vector<std::string> args = {"export-lora", "-m", e.base};
        args.insert(args.end(), e.adapters.begin(), e.adapters.end());
        args.insert(args.end(), {"-o", target.string(), "-t", "1"});
        const auto r = run_in_lora_folder(args);
        BOOST_TEST_REQUIRE(r.exit_code == 0, e.merged << ": " << r.err);
        BOOST_TEST(cktest::files_equal(target, *lora_data() / e.merged), e.merged);
    }
}

// The one-pass chain: a checkpoint, an adapter merged as it streams and quantized, gives the
// bytes of the merge written as F32 and quantized afterwards by `ckhost quantize`.
BOOST_AUTO_TEST_CASE(one_pass_merge_and_quantize_equals_two_passes,
                     *utf::precondition(LoraDataPresent())) {
    cktest::TempDir out;
    const fs::path checkpoint = *lora_data() / ".." / "hf" / "llama-bf16";
    const std::string lora =
        "lora[adapter=" + (*lora_data() / "llama-bf16-lora-all-r4.f32.gguf").string() + "]";
    auto r = cktest::run_ckhost({"--pipeline", "hf:" + lora + ":quantize[mix=q4_k_m]:gguf", "-i",
                                 checkpoint.string(), "-o", (out / "one.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = cktest::run_ckhost({"--pipeline", "hf:" + lora + ":dequant[to=f32]:gguf", "-i",
                            checkpoint.string(), "-o", (out / "merged-f32.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = cktest::run_ckhost(
        {"quantize", (out / "merged-f32.gguf").string(), (out / "two.gguf").string(), "Q4_K_M"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(out / "one.gguf", out / "two.gguf"));
}

// What llama-export-lora refuses after it started writing (a quantized adapter) or never checks
// (an adapter of another model), refused before anything is written.
BOOST_AUTO_TEST_CASE(refusals_on_the_reference_files, *utf::precondition(LoraDataPresent())) {
    cktest::TempDir out;
    const std::pair<std::vector<std::string>, std::vector<std::string>> cases[] = {
        {{"-m", "../hf/llama-bf16.f16.gguf", "--lora", "llama-bf16-lora-all-r4.q8_0.gguf"},
         {"q8_0", "quantized LoRA adapters are not merged"}},
        {{"-m", "../hf/llama-bf16.f16.gguf", "--lora", "mistral-nemo-bf16-lora-r8.f32.gguf"},
         {"rank or shape mismatch"}},
        {{"-m", "mistral-nemo-bf16.f16.gguf", "--lora",
          "mistral-nemo-bf16-lora-r8.f32.gguf,llama-bf16-lora-attn-r8.f32.gguf"},
         {"must change the same tensors"}},
    };
    for (const auto& [args, message] : cases) {
        std::vector<std::string> command = {"export-lora"};
        command.insert(command.end(), args.begin(), args.end());
        command.insert(command.end(), {"-o", (out / "merged.gguf").string()});
        const auto r = run_in_lora_folder(command);
        BOOST_TEST(r.exit_code == 1, r.err);
        for (const std::string& part : message) BOOST_TEST(contains(r.err, part), r.err);
        BOOST_TEST(out.entries().empty());
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_lora_reference
