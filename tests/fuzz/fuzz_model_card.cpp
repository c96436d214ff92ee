// The hf reader's model card (README.md front matter, YAML through libyaml) and what the
// general.* keys make of it: the input is README.md. ck::Error is the expected outcome for a
// bad card; any other exception escapes to the fuzzer as a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "fuzz_support.hpp"
#include "model_card.hpp"
#include "model_name.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::filesystem::path folder = [] {
        const auto path = ckfuzz::scratch_dir() / "Model-7B-Instruct-v0.1";
        std::filesystem::create_directories(path);
        return path;
    }();
    const auto bytes = std::as_bytes(std::span(data, size));
    ckfuzz::write_file(folder / "README.md", {bytes.begin(), bytes.end()});
    const nlohmann::ordered_json config = {{"_name_or_path", "org/Model-7B-Instruct-v0.1"}};
    try {
        (void)ckplugin::hf::read_model_card(folder);
        ck::Metadata metadata;
        ckplugin::hf::add_general_naming(config, folder, {7000000, 7000000, 0, 0}, metadata);
    } catch (const ck::Error&) {
    }
    return 0;
}
