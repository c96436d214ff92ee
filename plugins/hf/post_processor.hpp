// tokenizer.json's post_processor as gguf-py's SpecialVocab reads it: which special tokens a
// tokenizer adds around a text (add_bos/add_eos/add_sep), and the token texts it implies where
// tokenizer_config.json names none. The converter calls its reading of TemplateProcessing
// crude; this reproduces it rule for rule, including where it guesses (docs/formats/hf.md).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ckplugin::hf {

// Python's truth of a JSON value: None, False, 0, "" and empty containers are false.
template <class Json>
bool python_truth(const Json& value) {
    using type = typename Json::value_t;
    switch (value.type()) {
        case type::boolean:
            return value.template get<bool>();
        case type::number_integer:
        case type::number_unsigned:
            return value.template get<std::int64_t>() != 0;
        case type::number_float:
            return value.template get<double>() != 0.0;
        case type::string:
            return !value.template get_ref<const std::string&>().empty();
        case type::array:
        case type::object:
            return !value.empty();
        default:
            return false;
    }
}

// What SpecialVocab holds while it reads the tokenizer files, as far as the post-processor
// changes it.
struct SpecialVocabState {
    // tokenizer_config.json as the converter rewrites it in memory (bos/cls/eos/sep/eot/eom
    // texts); an empty object when the folder has none.
    nlohmann::ordered_json tc = nlohmann::ordered_json::object();
    bool have_tc = false;  // a non-empty tokenizer_config.json (Python's truth of the dict)
    std::vector<std::string> types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"};
    // add_<type>_token flags in the order they were first set (a Python dict).
    std::vector<std::pair<std::string, bool>> adds;
};

// Sets add_<type> in `adds`, keeping the place of one already there (a Python dict update).
void set_add_flag(std::vector<std::pair<std::string, bool>>& adds, const std::string& type,
                  bool value);

// Reads `post_processor` (null when tokenizer.json has none) into `state`; the texts the
// converter compares with are taken from state.tc first (with its cls -> bos and sep -> eos
// fallbacks written back, as the converter does for any tokenizer.json). Throws ck::Error
// naming `file` and "post_processor" for a value the converter fails on (a processor that is
// not an object, a template that is not a list of objects, an id that is not text).
void read_post_processor(const nlohmann::json& post_processor, SpecialVocabState& state,
                         const std::string& file);

}  // namespace ckplugin::hf
