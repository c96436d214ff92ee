#include "model_card.hpp"

#include <yaml.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>

#include "ck/error.hpp"
#include "ck/utf8.hpp"
#include "model_name.hpp"

namespace ckplugin::hf {
namespace {

namespace fs = std::filesystem;

// Python's str.splitlines() on text read with universal newlines (so no '\r' is left): lines
// end at \n, \v, \f, \x1c-\x1e, U+0085, U+2028 and U+2029; a last separator opens no line.
std::vector<std::string_view> python_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t start = 0, i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        std::size_t separator = 0;
        if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e)) separator = 1;
        if (text.substr(i, 2) == "\xc2\x85") separator = 2;
        if (text.substr(i, 3) == "\xe2\x80\xa8" || text.substr(i, 3) == "\xe2\x80\xa9")
            separator = 3;
        if (separator == 0) {
            ++i;
            continue;
        }
        lines.push_back(text.substr(start, i - start));
        i += separator;
        start = i;
    }
    if (start < text.size()) lines.push_back(text.substr(start));
    return lines;
}

void replace_all(std::string& text, std::string_view from, std::string_view to) {
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
}

// load_model_card's text for the YAML parser, or nullopt when the card has no front matter:
// the lines after a first line "---" up to the next "---" (or the end), with its two fixes
// (a list item `no` quoted, so it stays the language code rather than false; tabs as spaces).
std::optional<std::string> front_matter(std::string content) {
    replace_all(content, "\r\n", "\n");  // Python's universal newlines
    std::replace(content.begin(), content.end(), '\r', '\n');
    const std::vector<std::string_view> lines = python_lines(content);
    if (lines.empty() || lines.front() != "---") return std::nullopt;
    std::string yaml;
    for (std::size_t i = 1; i < lines.size() && lines[i] != "---"; ++i) {
        if (i > 1) yaml += '\n';
        yaml += lines[i];
    }
    yaml += '\n';
    replace_all(yaml, "- no\n", "- \"no\"\n");
    replace_all(yaml, "\t", "  ");
    return yaml;
}

// PyYAML's implicit resolvers (yaml/resolver.py, YAML 1.1) for a plain scalar, in its order.
CardValue::Kind resolve_plain(const std::string& s) {
    static const std::regex boolean(
        "yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF");
    static const std::regex real(
        R"([-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?|\.[0-9][0-9_]*([eE][-+][0-9]+)?)"
        R"(|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))");
    static const std::regex integer(
        "[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
        "|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+");
    static const std::regex null("~|null|Null|NULL|");
    static const std::regex timestamp(
        "[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9][0-9]?-[0-9][0-9]?([Tt]|[ \t]+)[0-9][0-9]?"
        R"(:[0-9]{2}:[0-9]{2}(\.[0-9]*)?([ \t]*(Z|[-+][0-9][0-9]?(:[0-9]{2})?))?)");
    using Kind = CardValue::Kind;
    if (std::regex_match(s, boolean)) return Kind::boolean;
    if (std::regex_match(s, real)) return Kind::real;
    if (std::regex_match(s, integer)) return Kind::integer;
    if (std::regex_match(s, null)) return Kind::null;
    if (std::regex_match(s, timestamp)) return Kind::other;  // a date or a time
    return Kind::text;
}

// Python's bool() of a resolved scalar: zero numbers, false and null are false.
bool scalar_truthy(CardValue::Kind kind, const std::string& s) {
    using Kind = CardValue::Kind;
    const auto any_of = [&s](std::string_view chars, std::size_t from = 0) {
        return s.find_first_of(chars, from) != std::string::npos;
    };
    switch (kind) {
        case Kind::null:
            return false;
        case Kind::boolean:
            return std::string_view("yYtToO").find(s.front()) != std::string::npos && s != "off" &&
                   s != "Off" && s != "OFF";
        case Kind::integer: {
            const std::size_t digits = s.find_first_not_of("+-");
            const bool prefixed = s.size() > digits + 1 && s[digits] == '0' &&
                                  (s[digits + 1] == 'x' || s[digits + 1] == 'b');
            return any_of("123456789abcdefABCDEF", digits + (prefixed ? 2 : 0));
        }
        case Kind::real:
            return any_of("iInN") || s.find_first_of("123456789") < s.find_first_of("eE");
        case Kind::text:
            return !s.empty();
        default:
            return true;
    }
}

// A libyaml event that frees itself; reset() frees it for the next one.
struct Event {
    yaml_event_t event{};
    Event() = default;
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    ~Event() { yaml_event_delete(&event); }
    void reset() { yaml_event_delete(&event); }  // also zeroes it
};

// Builds CardValues from libyaml's events as PyYAML's composer and SafeConstructor do.
class CardParser {
  public:
    CardParser(const std::string& yaml, fs::path file) : file_(std::move(file)) {
        yaml_parser_initialize(&parser_);
        yaml_parser_set_encoding(&parser_, YAML_UTF8_ENCODING);
        yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(yaml.data()),
                                     yaml.size());
    }
    ~CardParser() { yaml_parser_delete(&parser_); }
    CardParser(const CardParser&) = delete;
    CardParser& operator=(const CardParser&) = delete;

    // safe_load: the one document's value; nullopt for an empty stream (Python's None).
    std::optional<CardValue> document();

  private:
    void next(Event& e);
    CardValue node(const yaml_event_t& first, int depth);
    CardValue collection(const yaml_event_t& first, int depth);
    CardValue scalar(const yaml_event_t& e) const;
    [[noreturn]] void fail(const std::string& problem) const;

    yaml_parser_t parser_{};
    fs::path file_;
    // Anchored values and how many values each holds: an alias copies its value, so the
    // values made are counted to stop aliases of aliases from multiplying without end.
    std::map<std::string, std::pair<CardValue, std::size_t>> anchors_;
    std::size_t values_made_ = 0;
};

void CardParser::next(Event& e) {
    e.reset();
    if (!yaml_parser_parse(&parser_, &e.event)) {
        std::ostringstream what;
        what << (parser_.problem ? parser_.problem : "unreadable") << " at line "
             << parser_.problem_mark.line + 2 << ", column " << parser_.problem_mark.column + 1
             << "; llama.cpp's converter fails on it too";
        fail(what.str());
    }
}

void CardParser::fail(const std::string& problem) const {
    throw ck::Error("the model card's YAML front matter cannot be read: " + problem,
                    file_.string());
}

CardValue CardParser::scalar(const yaml_event_t& e) const {
    const auto& s = e.data.scalar;
    CardValue v;
    v.text.assign(reinterpret_cast<const char*>(s.value), s.length);
    const std::string_view tag = s.tag ? reinterpret_cast<const char*>(s.tag) : "";
    if (!tag.empty() && tag != "!")
        v.kind = tag == "tag:yaml.org,2002:str"    ? CardValue::Kind::text
                 : tag == "tag:yaml.org,2002:null" ? CardValue::Kind::null
                                                   : CardValue::Kind::other;
    else
        v.kind = s.plain_implicit ? resolve_plain(v.text) : CardValue::Kind::text;
    const std::string line = " at line " + std::to_string(e.start_mark.line + 2);
    if (s.plain_implicit && tag.empty() && v.text == "<<")
        fail("merge keys ('<<') are not supported" + line + "; write the entries out");
    if (s.plain_implicit && tag.empty() && v.text == "=")
        fail("'=' is no value PyYAML's safe loader can make" + line +
             " (llama.cpp's converter fails on it too); quote it");
    v.truthy = scalar_truthy(v.kind, v.text);
    if (v.kind == CardValue::Kind::null) v.text.clear();
    return v;
}

CardValue CardParser::collection(const yaml_event_t& first, int depth) {
    CardValue v;
    if (first.type == YAML_SEQUENCE_START_EVENT) {
        v.kind = CardValue::Kind::list;
        for (Event e; next(e), e.event.type != YAML_SEQUENCE_END_EVENT;)
            v.items.push_back(node(e.event, depth + 1));
        v.truthy = !v.items.empty();
        return v;
    }
    v.kind = CardValue::Kind::map;
    for (Event k; next(k), k.event.type != YAML_MAPPING_END_EVENT;) {
        const CardValue key = node(k.event, depth + 1);
        Event e;
        next(e);
        CardValue value = node(e.event, depth + 1);
        // Only text keys are ever looked up; a repeated key keeps its place and the last
        // value wins (a Python dict).
        if (key.kind != CardValue::Kind::text) continue;
        const auto same = std::find_if(v.entries.begin(), v.entries.end(),
                                       [&key](const CardEntry& kv) { return kv.key == key.text; });
        if (same != v.entries.end())
            same->value = std::move(value);
        else
            v.entries.push_back(CardEntry{key.text, std::move(value)});
    }
    v.truthy = !v.entries.empty();
    return v;
}

CardValue CardParser::node(const yaml_event_t& first, int depth) {
    if (depth > 256) fail("nested more than 256 levels deep");
    if (++values_made_ > 1'000'000) fail("more than a million values (aliases of aliases?)");
    if (first.type == YAML_ALIAS_EVENT) {
        const auto found = anchors_.find(reinterpret_cast<const char*>(first.data.alias.anchor));
        if (found == anchors_.end()) fail("an alias to no anchor");
        values_made_ += found->second.second;
        if (values_made_ > 1'000'000) fail("more than a million values (aliases of aliases?)");
        return found->second.first;
    }
    const std::size_t made_before = values_made_;
    const yaml_char_t* anchor = first.type == YAML_SCALAR_EVENT ? first.data.scalar.anchor
                                : first.type == YAML_SEQUENCE_START_EVENT
                                    ? first.data.sequence_start.anchor
                                    : first.data.mapping_start.anchor;
    CardValue v = first.type == YAML_SCALAR_EVENT ? scalar(first) : collection(first, depth);
    if (anchor)
        anchors_[reinterpret_cast<const char*>(anchor)] = {v, values_made_ - made_before + 1};
    return v;
}

std::optional<CardValue> CardParser::document() {
    std::optional<CardValue> root;
    for (Event e; next(e), e.event.type != YAML_STREAM_END_EVENT;) {
        if (e.event.type != YAML_DOCUMENT_START_EVENT) continue;  // stream start, document end
        if (root) fail("more than one YAML document");
        Event first;
        next(first);
        root = node(first.event, 0);
    }
    return root;
}

// use_model_card_metadata for every field, in apply_metadata_heuristic's order: llama.cpp's
// own keys, the same with "model_", then TheBloke's. A key with a null value fills nothing.
void apply_card_fields(const CardValue& card, Authorship& a) {
    using Field = Authorship::Field Authorship::*;
    static const std::pair<Field, const char*> fields[] = {
        {&Authorship::name, "name"},
        {&Authorship::author, "author"},
        {&Authorship::version, "version"},
        {&Authorship::organization, "organization"},
        {&Authorship::description, "description"},
        {&Authorship::finetune, "finetune"},
        {&Authorship::basename, "basename"},
        {&Authorship::size_label, "size_label"},
        {&Authorship::source_url, "url"},
        {&Authorship::source_doi, "doi"},
        {&Authorship::source_uuid, "uuid"},
        {&Authorship::source_repo_url, "repo_url"},
        {&Authorship::name, "model_name"},
        {&Authorship::author, "model_author"},
        {&Authorship::version, "model_version"},
        {&Authorship::organization, "model_organization"},
        {&Authorship::description, "model_description"},
        {&Authorship::finetune, "model_finetune"},
        {&Authorship::basename, "model_basename"},
        {&Authorship::size_label, "model_size_label"},
        {&Authorship::source_url, "model_url"},
        {&Authorship::source_doi, "model_doi"},
        {&Authorship::source_uuid, "model_uuid"},
        {&Authorship::source_repo_url, "model_repo_url"},
        {&Authorship::author, "model_creator"},
        {&Authorship::basename, "model_type"},
        {&Authorship::license, "license"},
        {&Authorship::license_name, "license_name"},
        {&Authorship::license_link, "license_link"},
    };
    for (const auto& [field, key] : fields) {
        const CardValue* value = card.find(key);
        if (!(a.*field) && value && value->kind != CardValue::Kind::null) a.*field = *value;
    }
}

// use_array_model_card_metadata: text is appended, a list's items are; the field becomes a
// list (maybe empty) whenever the key has a value that is not null.
void append_card_list(const CardValue& card, const char* key,
                      std::optional<std::vector<CardValue>>& list) {
    const CardValue* value = card.find(key);
    if (!value || value->kind == CardValue::Kind::null) return;
    if (!list) list.emplace();
    if (value->kind == CardValue::Kind::text) list->push_back(*value);
    if (value->kind == CardValue::Kind::list)
        list->insert(list->end(), value->items.begin(), value->items.end());
}

// What gguf-py makes of a base model or dataset given as text: a Hugging Face id
// ("org/Name-7B") or a URL (its id read when it is huggingface.co/org/name).
CardValue reference_from_text(const std::string& id, std::int64_t total) {
    CardValue entry;
    entry.kind = CardValue::Kind::map;
    const auto set = [&entry](const char* key, const std::string& value) {
        entry.entries.push_back(CardEntry{key, CardValue::of_text(value)});
    };
    const bool url =
        id.rfind("http://", 0) == 0 || id.rfind("https://", 0) == 0 || id.rfind("ssh://", 0) == 0;
    std::optional<std::string> hub_id = id;
    if (url) {
        set("repo_url", id);
        // gguf-py's pattern, its unescaped '.' included.
        static const std::regex hub_url("^https?://huggingface.co/([^/]+/[^/]+)$");
        std::smatch match;
        hub_id.reset();
        if (id.find("huggingface.co") != std::string::npos && std::regex_match(id, match, hub_url))
            hub_id = match[1].str();
    }
    if (!hub_id) return entry;
    const ModelIdParts parts = model_id_parts(*hub_id, total);
    if (parts.name) set("name", id_to_title(*parts.name));
    if (parts.organization) set("organization", id_to_title(*parts.organization));
    if (parts.version) set("version", *parts.version);
    if (!url && parts.organization && parts.name)
        set("repo_url", "https://huggingface.co/" + *parts.organization + "/" + *parts.name);
    return entry;
}

// The base models (or datasets) under the first of `keys` the card has: text, or a list of
// ids and maps; anything else in the list becomes an entry without keys, as in gguf-py.
void append_references(const CardValue& card, const std::array<const char*, 3>& keys,
                       std::int64_t total, std::optional<std::vector<CardValue>>& references) {
    const CardValue* value = nullptr;
    for (const char* key : keys)
        if ((value = card.find(key))) break;
    if (!value) return;
    if (!references) references.emplace();
    std::vector<CardValue> ids;
    if (value->kind == CardValue::Kind::text) ids.push_back(*value);
    if (value->kind == CardValue::Kind::list) ids = value->items;
    for (const CardValue& id : ids) {
        if (id.kind == CardValue::Kind::text)
            references->push_back(reference_from_text(id.text, total));
        else if (id.kind == CardValue::Kind::map)
            references->push_back(id);
        else
            references->push_back(CardValue{CardValue::Kind::map, {}, false, {}, {}});
    }
}

}  // namespace

void apply_model_card(const CardValue& card, std::int64_t total_parameters,
                      Authorship& authorship) {
    apply_card_fields(card, authorship);
    append_references(card, {"base_model", "base_models", "base_model_sources"}, total_parameters,
                      authorship.base_models);
    append_references(card, {"datasets", "dataset", "dataset_sources"}, total_parameters,
                      authorship.datasets);
    append_card_list(card, "tags", authorship.tags);
    append_card_list(card, "pipeline_tag", authorship.tags);
    append_card_list(card, "languages", authorship.languages);
    append_card_list(card, "language", authorship.languages);
}

CardValue CardValue::of_text(std::string value) {
    CardValue v;
    v.kind = Kind::text;
    v.truthy = !value.empty();
    v.text = std::move(value);
    return v;
}

const CardValue* CardValue::find(std::string_view key) const {
    for (const CardEntry& e : entries)
        if (e.key == key) return &e.value;
    return nullptr;
}

std::string CardValue::describe() const {
    switch (kind) {
        case Kind::null:
            return "null";
        case Kind::boolean:
            return "a boolean (" + text + ")";
        case Kind::integer:
        case Kind::real:
            return "a number (" + text + ")";
        case Kind::text:
            return "text";
        case Kind::other:
            return "a date (" + text + ")";
        case Kind::list:
            return "a list";
        default:
            return "a mapping";
    }
}

std::optional<CardValue> read_model_card(const fs::path& folder) {
    const fs::path file = folder / "README.md";
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return std::nullopt;
    std::ifstream in(file, std::ios::binary);
    if (!in) throw ck::Error("cannot open the model card", file.string());
    const std::string content{std::istreambuf_iterator<char>(in), {}};
    if (const auto bad = ck::invalid_utf8_at(content))
        throw ck::Error("the model card is not UTF-8; llama.cpp's converter fails on it too",
                        file.string(), *bad);
    const std::optional<std::string> yaml = front_matter(content);
    if (!yaml) return std::nullopt;
    std::optional<CardValue> card = CardParser(*yaml, file).document();
    if (!card || card->kind != CardValue::Kind::map) return std::nullopt;
    return card;
}

}  // namespace ckplugin::hf
