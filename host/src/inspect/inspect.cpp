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
#include "inspect/file_type_check.hpp"
#include "inspect/inspect_text.hpp"
#include "pipeline/plugin_call.hpp"
#include "pipeline/progress.hpp"
#include "registry/format_probe.hpp"

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

// What a reader that failed got through (Reader::read_before_failure); nothing when asking
// fails too, so that the reader's first error is the one reported.
ck::ModelHeader what_was_read(const std::string& plugin, const ck::Reader& reader) {
    try {
        return call_plugin(plugin, [&] { return reader.read_before_failure(); });
    } catch (const ck::Error&) {
        return {};
    }
}

}  // namespace

OpenedFile open_with_any_reader(PluginRegistry& registry, const fs::path& file,
                                ck::Context& context, ck::ModelHeader* read_before_failure) {
    // Why a file cannot be read at all (missing, a directory, no permission) is said here, with
    // the system's reason, before any reader sees it: their messages are about formats. A
    // checkpoint folder is shown to the probes as its config.json (registry/format_probe.hpp)
    // and opened as the folder; weights ckhost refuses to read (pickles) are named.
    const fs::path probed = probed_file(file);
    const std::string refused = refused_weights(file);
    ProbeSample sample;
    sample.path = probed;
    {
        const int fd = ::open(probed.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw ck::Error(cannot_open(errno), file.string());
        struct stat st {};
        if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
            const int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
            ::close(fd);
            throw ck::Error(cannot_open(e) + (refused.empty() ? "" : "; " + refused),
                            file.string());
        }
        while (sample.size < sizeof sample.head) {
            const ssize_t n =
                ::read(fd, sample.head + sample.size, sizeof sample.head - sample.size);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                const int e = errno;
                ::close(fd);
                throw ck::Error("cannot read the file: " + std::string(std::strerror(e)),
                                file.string());
            }
            if (n == 0) break;
            sample.size += static_cast<std::size_t>(n);
        }
        ::close(fd);
    }
    const auto readers = registry.names_with(CK_STAGE_READER);
    for (const auto& name : readers_recognising(registry, sample)) {
        const PluginEntry& p = registry.get(name);
        OpenedFile opened;
        opened.plugin = name;
        opened.reader.reset(
            call_plugin(name, [&] { return p.descriptor->create_reader(ck::Options(), context); }));
        try {
            opened.header = call_plugin(name, [&] { return opened.reader->open(file); });
        } catch (const ck::Error& e) {
            if (read_before_failure && e.kind() != ck::ErrorKind::interrupt)
                *read_before_failure = what_was_read(name, *opened.reader);
            throw;
        }
        return opened;
    }
    // Nobody recognised it. An empty file, a Git LFS pointer or a GGUF with a damaged magic
    // ('gguf', byte-swapped) is the GGUF reader's to explain; anything else is simply none of
    // the formats, and "expected 'GGUF'" would wrongly suggest it was meant to be one.
    if (std::find(readers.begin(), readers.end(), "gguf") != readers.end() &&
        gguf_should_explain(sample.head, sample.size)) {
        const PluginEntry& p = registry.get("gguf");
        std::unique_ptr<ck::Reader> reader(p.descriptor->create_reader(ck::Options(), context));
        call_plugin("gguf", [&] { return reader->open(file); });
    }
    if (!refused.empty()) throw ck::Error(refused, file.string());
    throw ck::Error("not a " + either_of(readers) +
                        " file: no reader plugin recognises it; it starts with " +
                        first_bytes(sample.head, sample.size),
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
    // A reader that converts on read (GGUF-lite's Q4 to F32): the bytes the file holds too.
    if (converts_on_read(h)) doc["stored_tensor_bytes"] = stored_tensor_bytes(h);
    doc["parameters"] = parameter_count(h);
    if (settings.tensors) {
        json tensors = json::array();
        for (const auto& t : h.tensors) {
            tensors.push_back({{"name", t.name},
                               {"type", std::string(ck::type_name(t.type))},
                               {"type_id", t.type},
                               {"shape", t.ne},
                               {"bytes", t.nbytes},
                               {"offset", t.source_offset}});
            if (t.stored_type.empty()) continue;
            tensors.back()["stored_type"] = t.stored_type;
            tensors.back()["stored_bytes"] = t.stored_bytes;
        }
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

void print_read_before_failure(const ck::ModelHeader& h, const InspectSettings& settings,
                               std::ostream& out) {
    if (settings.json || !settings.keys.empty()) return;
    if (h.format_facts.empty() && h.metadata.size() == 0 && h.tensors.empty()) return;
    TextInspectOptions text;
    text.file = settings.file.string();
    text.format = h.format;
    text.tensors = settings.tensors;
    text.partial = true;
    if (const auto stored = ck::llama::stored_file_type(h.metadata))
        text.file_type_label = ck::llama::file_type_label(*stored);
    print_inspect_text(h, text, out);
}

}  // namespace

int run_inspect(PluginRegistry& registry, const InspectSettings& settings, std::ostream& out,
                std::ostream& err) {
    ck::RecordingContext context;
    ck::ModelHeader read_before_failure;
    OpenedFile opened;
    try {
        opened = open_with_any_reader(registry, settings.file, context, &read_before_failure);
    } catch (const ck::Error&) {
        // As gguf-dump does: what could be read, then (from the caller) the error.
        print_read_before_failure(read_before_failure, settings, out);
        throw;
    }
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
