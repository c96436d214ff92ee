#include "chat_template.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "ck/error.hpp"
#include "ck/utf8.hpp"
#include "special_vocab.hpp"

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

constexpr const char* jinja_name = "chat_template.jinja";
constexpr const char* json_name = "chat_template.json";
constexpr const char* additional_folder = "additional_chat_templates";

// A template file as the converter's open(encoding='utf-8').read() gives it: strict UTF-8, and
// Python's universal newlines ("\r\n" and a lone "\r" read as "\n"); nothing else changes.
std::string read_template_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::string bytes;
    char block[1 << 14];
    while (in.read(block, sizeof block) || in.gcount() > 0)
        bytes.append(block, static_cast<std::size_t>(in.gcount()));
    if (!in.eof() || in.bad()) throw ck::Error("cannot read the chat template", path.string());
    if (const auto at = ck::invalid_utf8_at(bytes))
        throw ck::Error(
            "the chat template is not valid UTF-8 (llama.cpp's converter refuses it "
            "too)",
            path.string(), *at);
    std::string text;
    text.reserve(bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (bytes[i] != '\r') {
            text += bytes[i];
            continue;
        }
        text += '\n';
        if (i + 1 < bytes.size() && bytes[i + 1] == '\n') ++i;
    }
    return text;
}

// chat_template.jinja as the converter holds it: its text, or, when additional_chat_templates/
// has .jinja files, a list of {name, template} with the main one named "default" and the others
// by file stem (in name order; the converter takes the directory's order).
ordered_json jinja_templates(const fs::path& folder) {
    std::string text = read_template_file(folder / jinja_name);
    std::vector<fs::path> additional;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder / additional_folder, ec))
        if (entry.path().extension() == ".jinja" && entry.is_regular_file())
            additional.push_back(entry.path());
    if (additional.empty()) return text;
    std::sort(additional.begin(), additional.end());
    ordered_json list = ordered_json::array({{{"name", "default"}, {"template", std::move(text)}}});
    for (const fs::path& file : additional)
        list.push_back({{"name", file.stem().string()}, {"template", read_template_file(file)}});
    return list;
}

// The template the converter falls back on when tokenizer_config.json has none: the .jinja
// file first, else chat_template.json's chat_template; `file` says which.
std::optional<ordered_json> template_beside(const fs::path& folder, fs::path& file) {
    if (fs::is_regular_file(folder / jinja_name)) {
        file = folder / jinja_name;
        return jinja_templates(folder);
    }
    file = folder / json_name;
    const auto doc = read_json_file(file);
    if (!doc || !doc->is_object() || !doc->contains("chat_template")) return std::nullopt;
    return (*doc)["chat_template"];
}

// ASCII letters and digits stay, any other character (a code point, not a byte) becomes '_'
// (gguf-py's add_chat_template).
std::string key_name(const std::string& name) {
    std::string key;
    for (std::size_t i = 0; i < name.size();) {
        const char c = name[i];
        const bool ascii_alnum =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        key += ascii_alnum ? c : '_';
        i += std::max<std::size_t>(1, ck::utf8_sequence_length(name, i));
    }
    return key;
}

// A list of {name, template}: the "default" one is tokenizer.chat_template, each other one
// tokenizer.chat_template.NAME, and their names the array tokenizer.chat_templates (in list
// order; the converter's is a Python set's).
void write_named(const ordered_json& list, const fs::path& file, ck::Context& context,
                 ck::Metadata& metadata) {
    std::optional<std::string> default_text;
    std::vector<std::string> names;
    for (const auto& choice : list) {
        const auto text = choice.is_object() ? choice.find("template") : choice.end();
        if (choice.is_object() && (text == choice.end() || text->is_null()))
            continue;  // no template to keep (the converter skips it too)
        const auto name = choice.is_object() ? choice.find("name") : choice.end();
        if (!choice.is_object() || !text->is_string() || name == choice.end() ||
            !name->is_string() || name->get_ref<const std::string&>().empty()) {
            context.warn(file.string() + ": a chat template that is not {\"name\": text, " +
                         "\"template\": text} is not used: " + choice.dump());
            continue;
        }
        const std::string key = key_name(name->get<std::string>());
        if (key == "default") {
            default_text = text->get<std::string>();
            continue;
        }
        if (std::find(names.begin(), names.end(), key) == names.end()) names.push_back(key);
        metadata.set("tokenizer.chat_template." + key,
                     ck::Value::of_string(text->get<std::string>()));
    }
    if (!names.empty())
        metadata.set("tokenizer.chat_templates",
                     ck::Value::of_array(ck::ArrayValue::of_strings(names)));
    if (default_text)
        metadata.set("tokenizer.chat_template", ck::Value::of_string(std::move(*default_text)));
}

void write_template(const ordered_json& value, const fs::path& file, ck::Context& context,
                    ck::Metadata& metadata) {
    if (value.is_null()) return;
    if (value.is_string())
        metadata.set("tokenizer.chat_template", ck::Value::of_string(value.get<std::string>()));
    else if (value.is_array())
        write_named(value, file, context, metadata);
    else
        context.warn(file.string() + ": chat_template is neither text nor a list of named " +
                     "templates; not used, as llama.cpp's converter ignores it");
}

}  // namespace

void add_chat_template(const fs::path& folder, const ordered_json* tokenizer_config,
                       ck::Context& context, ck::Metadata& metadata) {
    if (!tokenizer_config) {
        for (const char* name : {jinja_name, json_name})
            if (fs::is_regular_file(folder / name))
                context.warn((folder / name).string() +
                             ": the chat template is not used: llama.cpp's converter reads one "
                             "only beside a tokenizer_config.json, and this folder has none (or "
                             "an empty one)");
        return;
    }
    fs::path beside_file;
    const std::optional<ordered_json> beside = template_beside(folder, beside_file);
    const auto own = tokenizer_config->find("chat_template");
    if (own == tokenizer_config->end()) {
        if (beside) write_template(*beside, beside_file, context, metadata);
        return;
    }
    if (beside && *beside != *own)
        context.warn(beside_file.string() +
                     ": the chat template is not used: tokenizer_config.json has its own "
                     "chat_template, which llama.cpp's converter prefers");
    write_template(*own, folder / "tokenizer_config.json", context, metadata);
}

}  // namespace ckplugin::hf
