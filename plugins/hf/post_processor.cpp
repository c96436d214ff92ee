#include "post_processor.hpp"

#include <algorithm>
#include <optional>

#include "ck/error.hpp"

using nlohmann::json;
using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

// The special token texts the converter compares template tokens with (its special_bos, ...):
// whatever tokenizer_config.json has under those keys, text or not.
struct SpecialTexts {
    ordered_json bos, cls, eos, sep;
};

// One template item's SpecialToken or Sequence id, as item.get(kind, {}).get('id') gives it:
// nullopt for none (or ""). Anything the converter would fail on is refused here.
class TemplateItems {
  public:
    explicit TemplateItems(const std::string& file) : file_(file) {}

    // `template_list` of a TemplateProcessing (absent: empty): a list of objects.
    const json& list(const json& processor, const char* key) const {
        static const json empty = json::array();
        const auto it = processor.find(key);
        if (it == processor.end()) return empty;
        if (!it->is_array()) fail(std::string("TemplateProcessing's ") + key + " is not a list");
        for (const json& item : *it)
            if (!item.is_object())
                fail(std::string("an item of TemplateProcessing's ") + key + " is not an object");
        return *it;
    }

    std::optional<std::string> id(const json& item, const char* kind) const {
        const auto entry = item.find(kind);
        if (entry == item.end()) return std::nullopt;
        if (!entry->is_object()) fail(std::string("a template's ") + kind + " is not an object");
        const auto id = entry->find("id");
        if (id == entry->end() || id->is_null()) return std::nullopt;
        if (!id->is_string()) fail(std::string("a template's ") + kind + " id is not text");
        if (id->get_ref<const std::string&>().empty()) return std::nullopt;
        return id->get<std::string>();
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw ck::Error(
            "malformed post_processor: " + what + " (llama.cpp's converter cannot read it either)",
            file_, std::nullopt, "post_processor");
    }

  private:
    const std::string& file_;
};

bool is_one_of(const std::optional<std::string>& token, const ordered_json& a,
               const ordered_json& b) {
    return token && (a == *token || b == *token);
}

class PostProcessorReader {
  public:
    PostProcessorReader(SpecialVocabState& state, const std::string& file)
        : state_(state), items_(file) {
        const auto text = [this](const char* key) {
            const auto it = state_.tc.find(key);
            return it == state_.tc.end() ? ordered_json() : *it;
        };
        texts_ = {text("bos_token"), text("cls_token"), text("eos_token"), text("sep_token")};
        if (!python_truth(texts_.bos) && python_truth(texts_.cls) && state_.have_tc)
            state_.tc["bos_token"] = texts_.bos = texts_.cls;
        if (!python_truth(texts_.eos) && python_truth(texts_.sep) && state_.have_tc)
            state_.tc["eos_token"] = texts_.eos = texts_.sep;
    }

    void read(const json& post) {
        if (!python_truth(post)) return;
        if (!post.is_object()) items_.fail("not an object");
        const auto listed = post.find("processors");
        const json processors = listed == post.end() ? json::array({post}) : *listed;
        if (!processors.is_array()) items_.fail("processors is not a list");
        for (const json& p : processors) {
            if (!p.is_object()) items_.fail("a processor is not an object");
            const auto type = p.find("type");
            if (type == p.end()) continue;
            if (*type == "RobertaProcessing") roberta(p);
            if (*type == "TemplateProcessing") template_processing(p);
        }
    }

  private:
    // RobertaProcessing adds <s> ... </s> and separates pairs: bos, eos and sep all added; its
    // cls and sep tokens name those the config leaves out.
    void roberta(const json& p) {
        for (const char* type : {"bos", "eos", "sep"}) set_add_flag(state_.adds, type, true);
        if (!python_truth(texts_.cls) && state_.have_tc)
            state_.tc["cls_token"] = texts_.cls = first_of(p, "cls", texts_.bos);
        if (!python_truth(texts_.sep) && state_.have_tc)
            state_.tc["sep_token"] = texts_.sep = first_of(p, "sep", texts_.eos);
    }

    // processor.get(key, [fallback])[0]
    ordered_json first_of(const json& p, const char* key, const ordered_json& fallback) const {
        const auto it = p.find(key);
        if (it == p.end()) return fallback;
        if (!it->is_array() || it->empty())
            items_.fail(std::string("RobertaProcessing's ") + key + " is not a [token, id] pair");
        return ordered_json((*it)[0]);
    }

    void template_processing(const json& p) {
        const json& single = items_.list(p, "single");
        const json& pair = items_.list(p, "pair");
        std::optional<std::string> first, last;
        if (single.size() > 1) {
            first = items_.id(single.front(), "SpecialToken");
            if (first) leading_token(*first);
            last = items_.id(single.back(), "SpecialToken");
            if (last) trailing_token(*last);
        }
        if (!pair.empty()) pair_template(pair, first, last);
    }

    // A special token first in the single template: added when it is the bos (or cls) text;
    // one the config does not name becomes bos and cls where it has neither.
    void leading_token(const std::string& first) {
        if (!state_.have_tc) {
            texts_.bos = first;
        } else if (!is_one_of(first, texts_.bos, texts_.cls)) {
            if (!python_truth(texts_.bos)) state_.tc["bos_token"] = texts_.bos = first;
            if (!python_truth(texts_.cls)) state_.tc["cls_token"] = texts_.cls = first;
        }
        set_add_flag(state_.adds, "bos", is_one_of(first, texts_.bos, texts_.cls));
    }

    // A special token last in the single template is the eos: one that is not the config's
    // eos replaces it, the old eos becoming the end-of-turn token (eot, else eom).
    void trailing_token(const std::string& last) {
        if (!state_.have_tc) {
            texts_.eos = last;
        } else if (texts_.eos != last) {
            std::vector<std::string>& types = state_.types;
            for (const char* fallback : {"eot", "eom"})
                if (std::find(types.begin(), types.end(), fallback) == types.end()) {
                    types.emplace_back(fallback);
                    state_.tc[std::string(fallback) + "_token"] = texts_.eos;
                    break;
                }
            state_.tc["eos_token"] = texts_.eos = last;
        }
        set_add_flag(state_.adds, "eos", texts_.eos == last);
    }

    // The pair template without the single template's leading and trailing tokens: A [t1 [t2]]
    // B. A separator (the sep or eos text) in it means add_sep; the first one counts only
    // when the single template has no trailing token.
    void pair_template(const json& pair, const std::optional<std::string>& first,
                       const std::optional<std::string>& last) {
        std::size_t begin = first && items_.id(pair.front(), "SpecialToken") == first ? 1 : 0;
        std::size_t end =
            last && items_.id(pair.back(), "SpecialToken") == last ? pair.size() - 1 : pair.size();
        if (end <= begin) return;
        if (items_.id(pair[begin], "Sequence") != "A" ||
            items_.id(pair[end - 1], "Sequence") != "B")
            return;
        if (end - begin <= 2) return;
        ++begin;
        --end;
        bool add_sep = false;
        if (is_one_of(items_.id(pair[begin], "SpecialToken"), texts_.sep, texts_.eos) && !last)
            add_sep = true;
        if (end - begin == 2 &&
            is_one_of(items_.id(pair[begin + 1], "SpecialToken"), texts_.sep, texts_.eos))
            add_sep = true;
        set_add_flag(state_.adds, "sep", add_sep);
        if (add_sep && !python_truth(texts_.sep) && state_.have_tc)
            state_.tc["sep_token"] = texts_.eos;
    }

    SpecialVocabState& state_;
    TemplateItems items_;
    SpecialTexts texts_;
};

}  // namespace

void set_add_flag(std::vector<std::pair<std::string, bool>>& adds, const std::string& type,
                  bool value) {
    for (auto& entry : adds)
        if (entry.first == type) {
            entry.second = value;
            return;
        }
    adds.emplace_back(type, value);
}

void read_post_processor(const json& post_processor, SpecialVocabState& state,
                         const std::string& file) {
    PostProcessorReader(state, file).read(post_processor);
}

}  // namespace ckplugin::hf
