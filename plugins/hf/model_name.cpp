#include "model_name.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <regex>
#include <vector>

#include <boost/algorithm/string/predicate.hpp>

#include "ck/error.hpp"
#include "model_card.hpp"

namespace ckplugin::hf {
namespace {

bool is_lower_word(std::string_view w) {
    bool cased = false;
    for (char c : w) {
        if (std::isupper(static_cast<unsigned char>(c))) return false;
        if (std::islower(static_cast<unsigned char>(c))) cased = true;
    }
    return cased;
}

std::string title_case(std::string_view w) {
    std::string out;
    bool after_letter = false;
    for (char c : w) {
        const auto u = static_cast<unsigned char>(c);
        const bool letter = std::isalpha(u) != 0;
        out += letter ? static_cast<char>(after_letter ? std::tolower(u) : std::toupper(u)) : c;
        after_letter = letter;
    }
    return out;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// Python's str.split() without arguments also splits at the ASCII separators \x1c-\x1f.
bool is_python_space(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

// What each '-'-separated part of a model id is, as get_model_id_components annotates it; a
// part may carry several (a trailing version of the basename is both).
enum PartKind : unsigned {
    basename_part = 1,
    size_label_part = 2,
    finetune_part = 4,
    version_part = 8,
    quant_type_part = 16,  // "Q4_K_M", "bf16": written nowhere, but it ends the basename
};

struct NamePart {
    std::string text;
    unsigned kinds = 0;
};

std::vector<NamePart> split_at_dashes(std::string_view name) {
    std::vector<NamePart> parts;
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t dash = std::min(name.find('-', start), name.size());
        if (dash > start) parts.push_back({std::string(name.substr(start, dash - start))});
        start = dash + 1;
    }
    return parts;
}

// float(part[:-1]) * 1000^k for "1.5B" and the like; nullopt where Python's float() fails
// ("8x7", "A3", "mini" less its last letter), and then the label is kept whatever the count.
std::optional<double> label_parameters(std::string_view label) {
    static constexpr std::string_view suffixes = "KMBT";
    static constexpr std::array<double, 4> scales = {1e3, 1e6, 1e9, 1e12};
    const std::size_t scale = suffixes.find(label.back());
    const std::string_view number = label.substr(0, label.size() - 1);
    double value = 0;
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value,
                                              std::chars_format::fixed);
    if (scale == std::string_view::npos || number.empty() || !is_digit(number.front()) ||
        error != std::errc() || end != number.data() + number.size())
        return std::nullopt;
    return value * scales[scale];
}

// Whether a size `label` in a model id is no size of the model: for a model's count, one more
// than 7/8 of it away; for an adapter's (negative: gguf-py counts what the adapter changes,
// which need not be the whole model), one below an eighth of it.
bool is_context_length(double label, std::int64_t total) {
    if (total < 0) return label < static_cast<double>(-(total / 8));
    // 7 * total // 8 without overflow: total - ceil(total / 8).
    const std::int64_t tolerance = total - total / 8 - (total % 8 != 0 ? 1 : 0);
    return std::fabs(label - static_cast<double>(total)) > static_cast<double>(tolerance);
}

// A size part ("7B", "8x7b", "1_5b", "bloom's 7b1", "mini"): normalized to "7B", "8x7B",
// "1.5B", "7.1B"; a number far from the model's count (more than 7/8 of it away) is taken
// for a context length ("4k" of Phi-3-mini-4k) and becomes part of the finetune, lowercase.
void annotate_size(NamePart& part, std::int64_t total) {
    std::string& s = part.text;
    std::replace(s.begin(), s.end(), '_', '.');
    if (is_digit(s.back())) s = s.substr(0, s.size() - 2) + "." + s.back() + s[s.size() - 2];
    if (s.size() > 1 && is_digit(s[s.size() - 2]) &&
        std::string_view("kmbt").find(s.back()) != std::string_view::npos)
        s.back() = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
    if (const auto label = total != 0 ? label_parameters(s) : std::nullopt) {
        if (is_context_length(*label, total)) {
            part.kinds |= finetune_part;
            s.back() = static_cast<char>(std::tolower(static_cast<unsigned char>(s.back())));
        }
    }
    if (part.kinds == 0) part.kinds = size_label_part;
}

void annotate_kinds(std::vector<NamePart>& parts, std::int64_t total) {
    using std::regex_constants::icase;
    static const std::regex version(R"(^(v|iter)?\d+(\.\d+)*$)", icase);
    static const std::regex quant_type(R"(^(i?q\d(_\w)*|b?fp?(16|32))$)", icase);
    static const std::regex size(
        R"(^(([A]|\d+[x])?\d+([._]\d+)?[KMBT]\d?|small|mini|medium|large|x?xl)$)", icase);
    static const std::regex finetune(R"(^(chat|instruct|vision|lora)$)", icase);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        NamePart& part = parts[i];
        if (std::regex_match(part.text, version))
            part.kinds |= version_part;
        else if (std::regex_match(part.text, quant_type))
            part.kinds |= quant_type_part;
        else if (i > 0 && std::regex_match(part.text, size))
            annotate_size(part, total);
        else if (i > 0 && std::regex_match(part.text, finetune))
            // "lora" says again what an adapter is: no finetune of its name.
            part.kinds |= total < 0 && boost::algorithm::iequals(part.text, "lora")
                              ? quant_type_part
                              : finetune_part;
    }
}

// A word size ("mini", "xl") is no size label beside a number one ("7B"); the word then
// counts as an ordinary part.
void drop_word_sizes_beside_numbers(std::vector<NamePart>& parts) {
    const auto has_digit = [](const std::string& s) {
        return std::any_of(s.begin(), s.end(), is_digit);
    };
    const auto numeric = [&](const NamePart& p) {
        return (p.kinds & size_label_part) && has_digit(p.text);
    };
    if (std::none_of(parts.begin(), parts.end(), numeric)) return;
    for (NamePart& p : parts) {
        const bool word = std::all_of(p.text.begin(), p.text.end(), [](char c) {
            return std::isalpha(static_cast<unsigned char>(c)) != 0;
        });
        if ((p.kinds & size_label_part) && word) p.kinds &= ~unsigned(size_label_part);
    }
}

// The basename is the leading run of plain words and versions ("Meta-Llama-3.1"); plain parts
// after it are the finetune; a version ending the basename is the model's version instead.
void mark_basename(std::vector<NamePart>& parts) {
    bool at_start = true;
    for (NamePart& p : parts) {
        // Non-ASCII counts as a letter: Python's isalpha holds for CJK and accented letters.
        const auto first = static_cast<unsigned char>(p.text.front());
        const bool starts_alpha = std::isalpha(first) || first >= 0x80;
        if (at_start && ((p.kinds == 0 && starts_alpha) || (p.kinds & version_part))) {
            p.kinds |= basename_part;
        } else {
            at_start = false;
            if (p.kinds == 0) p.kinds = finetune_part;
        }
    }
    for (auto p = parts.rbegin(); p != parts.rend(); ++p) {
        if (!(p->kinds & basename_part) || p->kinds == basename_part) break;
        p->kinds &= ~unsigned(basename_part);
    }
}

// The parts of `kind` (and not of `excluded`) joined by '-', each once when `unique`;
// nullopt when there is none.
std::optional<std::string> join_parts(const std::vector<NamePart>& parts, unsigned kind,
                                      unsigned excluded = 0, bool unique = false) {
    std::vector<std::string> chosen;
    for (const NamePart& p : parts)
        if ((p.kinds & kind) && !(p.kinds & excluded) &&
            (!unique || std::find(chosen.begin(), chosen.end(), p.text) == chosen.end()))
            chosen.push_back(p.text);
    if (chosen.empty()) return std::nullopt;
    std::string joined = chosen.front();
    for (std::size_t i = 1; i < chosen.size(); ++i) joined += "-" + chosen[i];
    return joined;
}

// apply_metadata_heuristic's config.json and folder parts: a model id fills the name fields
// still unset (the name and organization title-cased).
void fill_from_model_id(const ModelIdParts& id, Authorship& a) {
    const auto take = [](Authorship::Field& field, const std::optional<std::string>& value) {
        if (!field && value) field = CardValue::of_text(*value);
    };
    take(a.name, id.name ? std::optional(id_to_title(*id.name)) : std::nullopt);
    take(a.organization,
         id.organization ? std::optional(id_to_title(*id.organization)) : std::nullopt);
    take(a.basename, id.basename);
    take(a.finetune, id.finetune);
    take(a.version, id.version);
    take(a.size_label, id.size_label);
}

// Python's Path(folder).name: the last component as written, "." components and repeated or
// trailing slashes dropped, ".." kept, nothing resolved ("." has the empty name).
std::string python_path_name(const std::filesystem::path& folder) {
    const std::string text = folder.generic_string();
    std::string last;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t slash = std::min(text.find('/', start), text.size());
        const std::string_view component = std::string_view(text).substr(start, slash - start);
        if (!component.empty() && component != ".") last = component;
        start = slash + 1;
    }
    return last;
}

// A Hugging Face id ("org/name", "name"), not a path that was saved from: gguf-py takes
// _name_or_path only with at most one '/'.
std::optional<std::string> hub_model_id(const nlohmann::ordered_json& config) {
    const auto id = config.find("_name_or_path");
    if (id == config.end() || !id->is_string()) return std::nullopt;
    const std::string text = id->get<std::string>();
    if (std::count(text.begin(), text.end(), '/') > 1) return std::nullopt;
    return text;
}

// set_gguf_meta_model: each key in its order, when its field has a value. gguf-py's
// add_string skips a false one ("", null, 0, an empty list); one of another type than text
// fails the conversion there, and here, naming the model card it came from.
struct AuthorshipWriter {
    ck::Metadata& metadata;
    std::filesystem::path card;

    [[noreturn]] void wrong_type(const std::string& key, const CardValue& value,
                                 const char* what = "value is") const {
        throw ck::Error("the model card's " + std::string(what) + " " + value.describe() +
                            ", not text (llama.cpp's converter fails on it too); quote it",
                        card.string(), std::nullopt, "key '" + key + "'");
    }

    void text(const std::string& key, const Authorship::Field& field) const {
        if (!field || !field->truthy) return;
        if (field->kind != CardValue::Kind::text) wrong_type(key, *field);
        metadata.set(key, ck::Value::of_string(field->text));
    }

    // A list of licenses is written joined by ','.
    void license(const Authorship::Field& field) const {
        if (!field || field->kind != CardValue::Kind::list) return text("general.license", field);
        std::string joined;
        for (const CardValue& item : field->items) {
            if (item.kind != CardValue::Kind::text)
                wrong_type("general.license", item, "list holds");
            joined += (&item == &field->items.front() ? "" : ",") + item.text;
        }
        text("general.license", CardValue::of_text(joined));
    }

    void references(const std::string& prefix,
                    const std::optional<std::vector<CardValue>>& entries) const {
        if (!entries) return;
        metadata.set(prefix + ".count",
                     ck::Value::of_u32(static_cast<std::uint32_t>(entries->size())));
        static constexpr const char* fields[] = {"name",         "author",      "version",
                                                 "organization", "description", "url",
                                                 "doi",          "uuid",        "repo_url"};
        for (std::size_t i = 0; i < entries->size(); ++i)
            for (const char* field : fields)
                if (const CardValue* value = (*entries)[i].find(field))
                    text(prefix + "." + std::to_string(i) + "." + field, *value);
    }

    void list(const std::string& key, const std::optional<std::vector<CardValue>>& items) const {
        if (!items || items->empty()) return;
        std::vector<std::string> texts;
        for (const CardValue& item : *items) {
            if (item.kind != CardValue::Kind::text) wrong_type(key, item, "list holds");
            texts.push_back(item.text);
        }
        metadata.set(key, ck::Value::of_array(ck::ArrayValue::of_strings(texts)));
    }

    // Text fields in the order they are written, each with its key.
    using TextKeys = std::initializer_list<std::pair<const char*, Authorship::Field Authorship::*>>;
    void texts(const Authorship& a, TextKeys keys) const {
        for (const auto& [key, field] : keys) text(key, a.*field);
    }

    void write(const Authorship& a) const {
        using A = Authorship;
        texts(a, {{"general.name", &A::name},
                  {"general.author", &A::author},
                  {"general.version", &A::version},
                  {"general.organization", &A::organization},
                  {"general.finetune", &A::finetune},
                  {"general.basename", &A::basename},
                  {"general.description", &A::description},
                  {"general.size_label", &A::size_label}});
        license(a.license);
        texts(a, {{"general.license.name", &A::license_name},
                  {"general.license.link", &A::license_link},
                  {"general.source.url", &A::source_url},
                  {"general.source.doi", &A::source_doi},
                  {"general.source.uuid", &A::source_uuid},
                  {"general.source.repo_url", &A::source_repo_url}});
        references("general.base_model", a.base_models);
        references("general.dataset", a.datasets);
        list("general.tags", a.tags);
        list("general.languages", a.languages);
    }
};

}  // namespace

ModelIdParts model_id_parts(std::string_view model_id, std::int64_t total_parameters) {
    // A sentence ("my model 7B") is a plain name, not an id to take apart.
    ModelIdParts id;
    if (model_id.find(' ') != std::string_view::npos) {
        id.name = std::string(model_id);
        return id;
    }
    std::string_view name = model_id;
    if (const auto slash = model_id.find('/'); slash != std::string_view::npos) {
        const std::string_view organization = model_id.substr(0, slash);
        // "./name" and "../name" are relative paths, not an organization.
        if (organization.empty() || organization.front() != '.')
            id.organization = std::string(organization);
        name = model_id.substr(slash + 1);
    }
    id.name = std::string(name);
    std::vector<NamePart> parts = split_at_dashes(name);
    annotate_kinds(parts, total_parameters);
    drop_word_sizes_beside_numbers(parts);
    mark_basename(parts);
    id.size_label = join_parts(parts, size_label_part, 0, true);
    id.finetune = join_parts(parts, finetune_part);
    id.version = join_parts(parts, version_part, basename_part);
    // A lone basename ("gpt2", "llama-bf16") says too little to be one.
    if (id.size_label || id.finetune || id.version) id.basename = join_parts(parts, basename_part);
    return id;
}

std::string id_to_title(std::string_view id) {
    static const std::regex keep_as_is(R"(^(v\d+(?:\.\d+)*|\d.*)$)");
    std::string out;
    std::size_t start = 0;
    while (start < id.size()) {
        const auto separator = [](char c) { return c == '-' || is_python_space(c); };
        while (start < id.size() && separator(id[start])) ++start;
        std::size_t end = start;
        while (end < id.size() && !separator(id[end])) ++end;
        if (end == start) break;
        const std::string word(id.substr(start, end - start));
        if (!out.empty()) out += ' ';
        out +=
            is_lower_word(word) && !std::regex_search(word, keep_as_is) ? title_case(word) : word;
        start = end;
    }
    return out;
}

std::string size_label(std::uint64_t parameters) {
    const double n = static_cast<double>(parameters);
    double scaled = n * 1e-3;
    const char* suffix = "K";
    if (n > 1e12) {
        scaled = n * 1e-12;
        suffix = "T";
    } else if (n > 1e9) {
        scaled = n * 1e-9;
        suffix = "B";
    } else if (n > 1e6) {
        scaled = n * 1e-6;
        suffix = "M";
    }
    // Python's round() rounds halves to even, as nearbyint does in the default rounding mode;
    // the digits of the integer part, leading zeros stripped, decide how many decimals follow.
    std::string integer = std::to_string(static_cast<long long>(std::nearbyint(scaled)));
    integer.erase(0, integer.find_first_not_of('0') == std::string::npos
                         ? integer.size()
                         : integer.find_first_not_of('0'));
    const int decimals = std::max(2 - static_cast<int>(integer.size()), 0);
    char text[64];
    std::snprintf(text, sizeof text, "%.*f%s", decimals, scaled, suffix);
    return text;
}

void add_general_naming(const nlohmann::ordered_json& config, const std::filesystem::path& folder,
                        const ParameterCount& count, ck::Metadata& metadata) {
    Authorship authorship;
    const std::int64_t total = count.gguf_total();
    if (const auto card = read_model_card(folder)) apply_model_card(*card, total, authorship);
    if (const auto id = hub_model_id(config))
        fill_from_model_id(model_id_parts(*id, total), authorship);
    // The folder always gives a name (maybe empty), so the converter's later fallback to the
    // folder's name never applies.
    fill_from_model_id(model_id_parts(python_path_name(folder), total), authorship);
    if (!authorship.size_label && total > 0)
        authorship.size_label =
            CardValue::of_text(count.expert_count > 0 ? std::to_string(count.expert_count) + "x" +
                                                            size_label(count.shared + count.expert)
                                                      : size_label(count.total));
    AuthorshipWriter{metadata, folder / "README.md"}.write(authorship);
}

}  // namespace ckplugin::hf
