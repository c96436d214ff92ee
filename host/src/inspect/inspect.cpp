#include "inspect/inspect.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>

#include <nlohmann/json.hpp>

#include "ck/ggml_types.hpp"
#include "ck/kernels/validate.hpp"
#include "ck/llama/file_type.hpp"
#include "cli/exit_codes.hpp"
#include "cli/json_output.hpp"
#include "cli/suggest.hpp"
#include "inspect/inspect_text.hpp"
#include "pipeline/plugin_call.hpp"
#include "pipeline/progress.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ckhost {
namespace {

constexpr std::size_t json_array_head = 16;

json scalar_json(ck::ValueType type, std::uint64_t raw) {
    ck::Value v = ck::Value::scalar(type, raw);
    if (type == ck::ValueType::boolean) return raw != 0;
    if (type == ck::ValueType::f32 || type == ck::ValueType::f64) return *v.as_double();
    if (auto i = v.as_int()) return *i;
    return raw;
}

json value_json(const ck::Value& v, std::size_t head) {
    switch (v.type()) {
        case ck::ValueType::string:
            return v.str();
        case ck::ValueType::array: {
            const ck::ArrayValue& a = v.array();
            json items = json::array();
            if (a.element_type() == ck::ValueType::string) {
                a.for_each_string([&](std::string_view s) {
                    if (items.size() == head) return false;
                    items.push_back(std::string(s));
                    return true;
                });
            } else {
                for (std::uint64_t i = 0; i < a.size() && i < head; ++i)
                    items.push_back(scalar_json(a.element_type(), a.raw_at(i)));
            }
            return {{"elem_type", std::string(ck::value_type_name(a.element_type()))},
                    {"count", a.size()},
                    {"items", items}};
        }
        default:
            return scalar_json(v.type(), v.raw());
    }
}

std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> bytes_by_type(
    const ck::ModelHeader& h) {
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> out;  // type -> tensors, bytes
    for (const auto& t : h.tensors) {
        auto& [count, bytes] = out[std::string(ck::type_name(t.type))];
        ++count;
        bytes += t.nbytes;
    }
    return out;
}

// general.file_type against the tensors: the stored value and its llama.cpp name, what the
// tensors are mostly, and whether the two agree (ck/llama/file_type.hpp).
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

    // {"stored": 15, "name": "MOSTLY_Q4_K_M", "tensors_mostly": "q4_K",
    //  "tensors_file_type": 15, "tensors_file_type_name": "MOSTLY_Q4_K_M", "agrees": true,
    //  "problem": null}; null where there is nothing (no key, no name).
    json to_json() const {
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

// "cannot open the file: No such file or directory".
std::string cannot_open(int error) {
    return "cannot open the file: " + std::string(std::strerror(error));
}

// Whether the GGUF reader's message explains a file no reader recognised better than "not a
// file any reader knows": empty, a Git LFS pointer, or "GGUF" in another case or byte order.
bool gguf_should_explain(const unsigned char* head, std::size_t size) {
    if (size == 0) return true;
    const std::string_view text(reinterpret_cast<const char*>(head), size);
    if (text.starts_with("version https://git-lfs")) return true;
    if (size < 4) return false;
    std::string magic(text.substr(0, 4));
    for (char& c : magic) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return magic == "GGUF" || magic == "FUGG";
}

// "bump, gguf, gguflite or safetensors".
std::string either_of(const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return out.empty() ? "known" : out;
}

// "68 65 6c 6c 6f 0a (\"hello\\n\")": the first bytes, in hex and as text.
std::string first_bytes(const unsigned char* head, std::size_t size) {
    const std::size_t n = std::min<std::size_t>(size, 8);
    std::string hex;
    for (std::size_t i = 0; i < n; ++i) {
        char buf[4];
        std::snprintf(buf, sizeof buf, "%s%02x", i ? " " : "", head[i]);
        hex += buf;
    }
    return hex + " (" +
           ck::Value::of_string(std::string(reinterpret_cast<const char*>(head), n)).to_display() +
           ")";
}

}  // namespace

OpenedFile open_with_any_reader(PluginRegistry& registry, const fs::path& file,
                                ck::Context& context) {
    // Why a file cannot be read at all (missing, a directory, no permission) is said here, with
    // the system's reason, before any reader sees it: their messages are about formats.
    unsigned char head[256] = {};
    std::size_t got = 0;
    {
        const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw ck::Error(cannot_open(errno), file.string());
        struct stat st {};
        if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
            const int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
            ::close(fd);
            throw ck::Error(cannot_open(e), file.string());
        }
        while (got < sizeof head) {
            const ssize_t n = ::read(fd, head + got, sizeof head - got);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                const int e = errno;
                ::close(fd);
                throw ck::Error("cannot read the file: " + std::string(std::strerror(e)),
                                file.string());
            }
            if (n == 0) break;
            got += static_cast<std::size_t>(n);
        }
        ::close(fd);
    }
    auto readers = registry.names_with(CK_STAGE_READER);
    for (const auto& name : readers) {
        const PluginEntry& p = registry.get(name);
        if (!p.descriptor->probe) continue;
        bool match =
            call_plugin(name, [&] { return p.descriptor->probe(head, got, file.c_str()); });
        if (!match) continue;
        OpenedFile opened;
        opened.plugin = name;
        opened.reader.reset(
            call_plugin(name, [&] { return p.descriptor->create_reader(ck::Options(), context); }));
        opened.header = call_plugin(name, [&] { return opened.reader->open(file); });
        return opened;
    }
    // Nobody recognised it. An empty file, a Git LFS pointer or a GGUF with a damaged magic
    // ('gguf', byte-swapped) is the GGUF reader's to explain; anything else is simply none of
    // the formats, and "expected 'GGUF'" would wrongly suggest it was meant to be one.
    if (std::find(readers.begin(), readers.end(), "gguf") != readers.end() &&
        gguf_should_explain(head, got)) {
        const PluginEntry& p = registry.get("gguf");
        std::unique_ptr<ck::Reader> reader(p.descriptor->create_reader(ck::Options(), context));
        call_plugin("gguf", [&] { return reader->open(file); });
    }
    throw ck::Error("not a " + either_of(readers) +
                        " file: no reader plugin recognises it; it starts with " +
                        first_bytes(head, got),
                    file.string());
}

json facts_json(const ck::ModelHeader& header) {
    json facts = json::object();
    for (const auto& [key, value] : header.format_facts) {
        std::string name;
        for (char c : key) {
            const bool word = std::isalnum(static_cast<unsigned char>(c)) != 0;
            if (word)
                name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            else if (!name.empty() && name.back() != '_')
                name += '_';
        }
        while (!name.empty() && name.back() == '_') name.pop_back();
        std::uint64_t number = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
        if (!value.empty() && ec == std::errc() && end == value.data() + value.size() &&
            (value == "0" || value[0] != '0'))
            facts[name] = number;
        else
            facts[name] = value;
    }
    return facts;
}

namespace {

// --kv: every key is looked up before anything is printed, so that a typo fails the whole
// request rather than leaving half an answer.
std::vector<const ck::Value*> requested_values(const ck::ModelHeader& h,
                                               const InspectSettings& settings) {
    std::vector<const ck::Value*> values;
    for (const std::string& key : settings.keys) {
        values.push_back(h.metadata.find(key));
        if (values.back()) continue;
        std::vector<std::string> keys;
        for (const auto& [k, _] : h.metadata) keys.push_back(k);
        throw ck::key_error("no such key" + did_you_mean(key, keys), key, settings.file.string());
    }
    return values;
}

// --kv's answer: the values in full, not cut short like the metadata of a whole report.
void print_requested_values(const OpenedFile& opened, const InspectSettings& settings,
                            std::ostream& out) {
    const std::vector<const ck::Value*> values = requested_values(opened.header, settings);
    if (settings.json) {
        json doc = json_document("inspect");
        doc["file"] = settings.file.string();
        doc["format"] = opened.plugin;
        json list = json::array();
        for (std::size_t i = 0; i < values.size(); ++i)
            list.push_back({{"key", settings.keys[i]},
                            {"type", std::string(ck::value_type_name(values[i]->type()))},
                            {"value", value_json(*values[i], SIZE_MAX)}});
        doc["values"] = list;
        print_json(out, doc);
        return;
    }
    // One key: its value alone, for scripts; several: each under a "KEY (TYPE):" line.
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (values.size() > 1)
            out << settings.keys[i] << " (" << ck::value_type_name(values[i]->type()) << "):\n";
        print_full_value(*values[i], out);
    }
}

// The whole report for --json (docs/json.md): long arrays cut to their first items.
json inspect_document(const OpenedFile& opened, const InspectSettings& settings) {
    const ck::ModelHeader& h = opened.header;
    const FileTypeCheck file_type(h);
    json doc = json_document("inspect");
    doc["file"] = settings.file.string();
    doc["format"] = opened.plugin;
    doc["facts"] = facts_json(h);
    json meta = json::array();
    for (const auto& [k, v] : h.metadata) {
        meta.push_back({{"key", k},
                        {"type", std::string(ck::value_type_name(v.type()))},
                        {"value", value_json(v, json_array_head)}});
        if (k == ck::llama::file_type_key) meta.back()["name"] = file_type.to_json()["name"];
    }
    doc["metadata"] = meta;
    doc["file_type"] = file_type.to_json();
    json types = json::object();
    for (const auto& [type, cb] : bytes_by_type(h))
        types[type] = {{"tensors", cb.first}, {"bytes", cb.second}};
    doc["bytes_by_type"] = types;
    doc["tensor_count"] = h.tensors.size();
    doc["tensor_bytes"] = h.total_bytes();
    doc["parameters"] = parameter_count(h);
    if (settings.tensors) {
        json tensors = json::array();
        for (const auto& t : h.tensors)
            tensors.push_back({{"name", t.name},
                               {"type", std::string(ck::type_name(t.type))},
                               {"type_id", t.type},
                               {"shape", t.ne},
                               {"bytes", t.nbytes},
                               {"offset", t.source_offset}});
        doc["tensors"] = tensors;
    }
    return doc;
}

// What the text report (inspect_text.hpp) says beyond the header: the file, and what is wrong
// with general.file_type, if anything.
TextInspectOptions text_report_options(const OpenedFile& opened, const InspectSettings& settings) {
    const ck::ModelHeader& h = opened.header;
    const FileTypeCheck file_type(h);
    TextInspectOptions text;
    text.file = settings.file.string();
    text.format = opened.plugin;
    text.tensors = settings.tensors;
    if (file_type.stored) text.file_type_label = ck::llama::file_type_label(*file_type.stored);
    text.file_type_problem = file_type.problem();
    // A GGUF without the key is named by llama.cpp from its tensors when it loads it.
    if (!file_type.stored_value && opened.plugin == "gguf" && !h.tensors.empty())
        text.file_type_missing =
            "general.file_type is not stored; the tensors are " + file_type.mostly_named();
    return text;
}

}  // namespace

int run_inspect(PluginRegistry& registry, const InspectSettings& settings, std::ostream& out,
                std::ostream& err) {
    ck::RecordingContext context;
    const OpenedFile opened = open_with_any_reader(registry, settings.file, context);
    for (const auto& w : context.warnings()) err << "warning: " << w << "\n";
    if (!settings.keys.empty())
        print_requested_values(opened, settings, out);
    else if (settings.json)
        print_json(out, inspect_document(opened, settings));
    else
        print_inspect_text(opened.header, text_report_options(opened, settings), out);
    return 0;
}

}  // namespace ckhost
