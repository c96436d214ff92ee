// general.file_type against a header's tensors, as `inspect` shows it and `verify` checks it
// (the rules are ck/llama/file_type.hpp's).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ck/ggml_types.hpp"
#include "ck/llama/file_type.hpp"
#include "ck/model.hpp"

namespace ckhost {

// The stored value and its llama.cpp name, what the tensors are mostly, and whether the two
// agree.
struct FileTypeCheck {
    const ck::Value* stored_value = nullptr;
    std::optional<std::uint32_t> stored;
    ck::llama::FileTypeGuess guess;
    bool fits = false;

    explicit FileTypeCheck(const ck::ModelHeader& h)
        : stored_value(h.metadata.find(ck::llama::file_type_key)),
          stored(ck::llama::stored_file_type(h.metadata)),
          guess(ck::llama::guess_file_type(h)),
          fits(stored && ck::llama::file_type_fits(*stored, guess)) {}

    // "mostly q4_K: 15 (MOSTLY_Q4_K_M)", or "mostly i8, which llama.cpp has no file type for".
    std::string mostly() const { return std::string(ck::type_name(guess.most_common_type)); }
    std::string mostly_named() const {
        if (!guess.file_type)
            return "mostly " + mostly() + ", which llama.cpp has no file type for";
        return "mostly " + mostly() + " (llama.cpp's name for them: " +
               ck::llama::file_type_label(static_cast<std::uint32_t>(*guess.file_type)) + ")";
    }

    // One line saying what is wrong, or "" when the stored value is a fair name.
    std::string problem() const {
        if (!stored_value || fits || guess.counted == 0) return {};
        const std::string what = stored ? ck::llama::file_type_label(*stored)
                                        : stored_value->to_display() + " (not a file type id)";
        return "stored " + what + " but the tensors are " + mostly_named();
    }

    // What `verify` fails: a value that is no file type id at all, or a known file type the
    // tensors contradict (ck::llama::file_type_contradicts); "" otherwise.
    std::string contradiction() const {
        if (!stored_value || guess.counted == 0) return {};
        if (stored && !ck::llama::file_type_contradicts(*stored, guess)) return {};
        return problem();
    }

    // {"stored": 15, "name": "MOSTLY_Q4_K_M", "tensors_mostly": "q4_K",
    //  "tensors_file_type": 15, "tensors_file_type_name": "MOSTLY_Q4_K_M", "agrees": true,
    //  "problem": null}; null where there is nothing (no key, no name).
    nlohmann::json to_json() const {
        using nlohmann::json;
        const auto name_of = [](std::optional<std::uint32_t> id) {
            const ck::llama::FileTypeInfo* info = id ? ck::llama::find_file_type(*id) : nullptr;
            return info ? json(std::string(info->name)) : json(nullptr);
        };
        std::optional<std::uint32_t> guessed;
        if (guess.file_type) guessed = static_cast<std::uint32_t>(*guess.file_type);
        const std::string why = problem();
        return {{"stored", stored ? json(*stored) : json(nullptr)},
                {"name", name_of(stored)},
                {"tensors_mostly", mostly()},
                {"tensors_file_type", guessed ? json(*guessed) : json(nullptr)},
                {"tensors_file_type_name", name_of(guessed)},
                {"agrees", stored_value ? json(fits) : json(nullptr)},
                {"problem", why.empty() ? json(nullptr) : json(why)}};
    }
};

}  // namespace ckhost
