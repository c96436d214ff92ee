// Which reader an input needs: when the pipeline's reader cannot open it, the readers whose
// probe recognises it are named (and the pipeline with one of them in its place suggested, when
// it plans); a safetensors file of a Hugging Face checkpoint converted alone is warned about.
#include "pipeline/pipeline.hpp"
#include "pipeline/pipeline_stages.hpp"

#include <string>
#include <utility>
#include <vector>

#include "ck/error.hpp"
#include "registry/format_probe.hpp"

namespace fs = std::filesystem;

namespace ckhost {

std::pair<std::string, std::string> Pipeline::reader_hint(const fs::path& input,
                                                          const fs::path& output,
                                                          const std::string& input_name) const {
    const Stage& reader = *stages_.front();
    if (const std::string refused = refused_weights(input); !refused.empty())
        return {"; " + refused, ""};
    std::vector<std::string> others;
    try {
        for (const std::string& name : readers_recognising(registry_, probe_sample(input)))
            if (name != reader.spec.name) others.push_back(name);
    } catch (const ck::Error&) {
        return {};  // a probe that fails only costs the hint
    }
    if (others.empty()) return {};
    const std::string& other = others.front();
    const std::string hint = "; it is " + format_words(registry_.get(other)) +
                             ", which the reader '" + other + "' reads: use " + other +
                             ": instead of " + reader.spec.name + ":";
    std::string text = other;
    for (std::size_t k = 1; k < stages_.size(); ++k) text += ":" + stages_[k]->spec.text;
    try {
        Pipeline candidate(registry_, text);
        candidate.plan_stages(input, output, input_name);
        return {hint, text};
    } catch (const ck::Error&) {
        return {hint, ""};  // the other reader reads it, but this pipeline still fails there
    }
}

void Pipeline::warn_if_part_of_a_checkpoint(const fs::path& input) {
    std::error_code ec;
    if (input.extension() != ".safetensors" || !fs::is_regular_file(input, ec)) return;
    const fs::path folder = input.parent_path().empty() ? fs::path(".") : input.parent_path();
    const std::string& reader = stages_.front()->spec.name;
    std::vector<std::string> folder_readers;
    try {
        folder_readers = readers_recognising(registry_, probe_sample(folder));
    } catch (const ck::Error&) {
        return;
    }
    for (const std::string& other : folder_readers) {
        if (other == reader) continue;
        const Stage& writer = *stages_.back();
        const std::string pipeline = other + text_.substr(text_.find(':'));
        context_.warn(
            input.string() + " is one file of " + format_words(registry_.get(other)) + " (" +
            folder.string() + "/, which the reader '" + other + "' reads whole): the reader '" +
            reader + "' takes the file alone, with the checkpoint's tensor names and none of its " +
            "configuration" +
            (writer.spec.name == "gguf" ? ", so llama.cpp cannot load the result" : "") +
            "; convert the checkpoint with --pipeline '" + pipeline + "' -i " + folder.string() +
            "/");
        return;
    }
}

}  // namespace ckhost
