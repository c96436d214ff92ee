#include "export_bpe_tokenizer.hpp"

#include <deque>
#include <optional>
#include <unordered_map>

#include "bpe_vocab.hpp"
#include "ck/error.hpp"
#include "post_processor.hpp"
#include "sentencepiece.hpp"
#include "tokenizer_config_writer.hpp"
#include "tokenizer_json_writer.hpp"

using nlohmann::json;
using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

constexpr std::string_view bpe_tokens_key = "tokenizer.ggml.tokens";

bool is_bpe_added(std::int32_t type) {
    return type == token_type(PieceType::control) || type == token_type(PieceType::user_defined);
}

struct BpeLayout {
    std::vector<std::string_view> texts;  // by id, as tokenizer.json holds them
    std::deque<std::string> restored;     // the texts that are not the GGUF's
    std::vector<std::uint32_t> vocab;
    std::vector<AddedTokenEntry> added;
};

// Each text once: tokenizer.json's vocabulary maps a text to one id, and the reader's
// get_vocab() keeps one id per text (it never gives two ids one text).
void check_bpe_texts(const BpeLayout& layout, const GgufTokenizer& t) {
    std::unordered_map<std::string_view, std::size_t> seen;
    for (std::size_t i = 0; i < layout.texts.size(); ++i) {
        if (is_converter_pad(t, i)) continue;
        require_json_text(layout.texts[i], bpe_tokens_key, token_label(i));
        if (const auto [at, fresh] = seen.emplace(layout.texts[i], i); !fresh)
            throw ck::key_error(token_label(at->second) + " and " + std::to_string(i) +
                                    " are both '" + std::string(layout.texts[i]) +
                                    "': a tokenizer.json maps each text to one id",
                                bpe_tokens_key);
    }
}

// NORMAL tokens are the model's vocabulary, CONTROL and USER_DEFINED ones its added tokens
// (special when CONTROL), [PADn] pads neither: the converter made them for ids without a token.
// In the SentencePiece layout the added tokens are in the vocabulary too. Other types (which
// the reader never writes for a tokenizer.json) are vocabulary.
BpeLayout bpe_layout(const GgufTokenizer& t, const BpeFamily& family) {
    BpeLayout layout;
    layout.texts = t.tokens;
    for (std::size_t i = 0; i < t.tokens.size(); ++i) {
        if (is_converter_pad(t, i)) continue;
        const auto id = static_cast<std::uint32_t>(i);
        const bool added = is_bpe_added(t.types[i]);
        if (added) {
            layout.added.push_back({id, t.types[i] == token_type(PieceType::control)});
            if (family.sentencepiece_layout && t.types[i] == token_type(PieceType::user_defined))
                layout.texts[i] =
                    layout.restored.emplace_back(spaces_as_metaspace(std::string(t.tokens[i])));
        }
        if (!added || family.sentencepiece_layout) layout.vocab.push_back(id);
    }
    check_bpe_texts(layout, t);
    return layout;
}

// SpecialVocab's order of types (cls has no GGUF key).
std::optional<int> special_rank(const std::string& type) {
    static const char* const order[] = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"};
    for (int rank = 0; rank < 7; ++rank)
        if (type == order[rank]) return rank;
    return std::nullopt;
}

// The reader takes special ids first from tokenizer_config.json's texts found among
// tokenizer.json's added tokens (in SpecialVocab's type order), then from config.json (in that
// order again). The longest prefix of the GGUF's ids that can come from texts does; the other
// ids are config.json's, their texts null where they would be found among the added tokens.
ordered_json bpe_specials(const GgufTokenizer& t, const BpeLayout& layout) {
    std::vector<SpecialTokenId> ids;
    for (const SpecialTokenId& special : t.special_ids)
        if (special_rank(special.type)) ids.push_back(special);
    const auto ascending = [&ids](std::size_t begin, std::size_t end) {
        for (std::size_t j = begin + 1; j < end; ++j)
            if (*special_rank(ids[j - 1].type) >= *special_rank(ids[j].type)) return false;
        return true;
    };
    std::size_t from_texts = 0;
    for (std::size_t k = ids.size() + 1; k-- > 0;) {
        bool possible = ascending(0, k) && ascending(k, ids.size());
        for (std::size_t j = 0; j < k; ++j) possible = possible && is_bpe_added(t.types[ids[j].id]);
        if (possible) {
            from_texts = k;
            break;
        }
    }
    ordered_json specials = special_flags(t);
    for (std::size_t j = 0; j < ids.size(); ++j) {
        const bool text = j < from_texts || !is_bpe_added(t.types[ids[j].id]);
        specials[ids[j].type + "_token"] =
            text ? json(std::string(layout.texts[ids[j].id])) : json(nullptr);
    }
    return specials;
}

struct TemplateToken {
    std::string text;
    std::uint32_t id = 0;
};

// bos or eos for a template: the GGUF adds it and tokenizer_config.json names it.
std::optional<TemplateToken> template_token(const GgufTokenizer& t, const ordered_json& specials,
                                            const std::string& type) {
    const auto id = t.id_of(type);
    const auto text = specials.find(type + "_token");
    if (!id || t.flag(type) != true || text == specials.end() || !text->is_string())
        return std::nullopt;
    return TemplateToken{text->get<std::string>(), *id};
}

ordered_json template_item(const char* kind, const std::string& id, int type_id) {
    return {{kind, {{"id", id}, {"type_id", type_id}}}};
}

// transformers' template for add_bos / add_eos: "[bos] $A [eos]", and for pairs
// "[bos] $A [eos] [bos] $B [eos]" (separated) or "[bos] $A $B [eos]".
ordered_json template_processing(const std::optional<TemplateToken>& bos,
                                 const std::optional<TemplateToken>& eos, bool separated_pair) {
    ordered_json single = ordered_json::array(), pair = ordered_json::array();
    for (ordered_json* items : {&single, &pair}) {
        if (bos) items->push_back(template_item("SpecialToken", bos->text, 0));
        items->push_back(template_item("Sequence", "A", 0));
    }
    if (eos) single.push_back(template_item("SpecialToken", eos->text, 0));
    if (separated_pair && eos) pair.push_back(template_item("SpecialToken", eos->text, 0));
    if (separated_pair && bos) pair.push_back(template_item("SpecialToken", bos->text, 1));
    pair.push_back(template_item("Sequence", "B", 1));
    if (eos) pair.push_back(template_item("SpecialToken", eos->text, 1));
    ordered_json tokens = ordered_json::object();
    for (const auto* token : {&bos, &eos})
        if (*token)
            tokens[(*token)->text] = {{"id", (*token)->text},
                                      {"ids", ordered_json::array({(*token)->id})},
                                      {"tokens", ordered_json::array({(*token)->text})}};
    return {{"type", "TemplateProcessing"},
            {"single", std::move(single)},
            {"pair", std::move(pair)},
            {"special_tokens", std::move(tokens)}};
}

// Whether the reader reads `post` and the config's flags as the GGUF's add flags, in its order,
// without rewriting a special token's text.
bool flags_read_back(const ordered_json& post, const ordered_json& specials,
                     const std::vector<AddTokenFlag>& want) {
    SpecialVocabState state;
    state.tc = specials;
    state.have_tc = true;
    try {
        read_post_processor(json::parse(post.dump()), state, "tokenizer.json");
    } catch (const ck::Error&) {
        return false;
    }
    if (state.tc != specials || state.types != SpecialVocabState().types) return false;
    for (const std::string& type : state.types)
        if (const auto flag = specials.find("add_" + type + "_token");
            flag != specials.end() && flag->is_boolean())
            set_add_flag(state.adds, type, flag->get<bool>());
    std::vector<AddTokenFlag> got;
    for (const auto& [type, value] : state.adds)
        if (type == "bos" || type == "eos" || type == "sep") got.push_back({type, value});
    if (got.size() != want.size()) return false;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i].type != want[i].type || got[i].value != want[i].value) return false;
    return true;
}

// The post-processor: a TemplateProcessing adding what the GGUF adds, the first form the
// reader reads back as the GGUF's flags (transformers' own first); else none, the flags then
// only in tokenizer_config.json (in SpecialVocab's order).
ordered_json choose_post_processor(const GgufTokenizer& t, const BpeFamily& family,
                                   const ordered_json& specials) {
    const auto bos = template_token(t, specials, "bos");
    const auto eos = template_token(t, specials, "eos");
    const bool separated_first = t.flag("sep").has_value();
    for (int with_bos = bos ? 1 : 0; with_bos >= 0; --with_bos)
        for (int with_eos = eos ? 1 : 0; with_eos >= 0; --with_eos) {
            if (!with_bos && !with_eos) continue;
            for (bool separated : {separated_first, !separated_first}) {
                const ordered_json post = bpe_post_processor(
                    family, template_processing(with_bos ? bos : std::nullopt,
                                                with_eos ? eos : std::nullopt, separated));
                if (flags_read_back(post, specials, t.add_flags)) return post;
            }
        }
    return bpe_post_processor(family, nullptr);
}

const BpeFamily& bpe_family_for(const GgufTokenizer& t, TokenizerStyle style) {
    const BpeFamily* family = find_bpe_family(t.pre);
    if (!family)
        throw ck::key_error("pre-tokenizer '" + t.pre +
                                "' has no tokenizer.json the hf writer knows (known: " +
                                bpe_family_names() + "; docs/formats/hf.md)",
                            "tokenizer.ggml.pre");
    if (style == TokenizerStyle::gemma)
        throw ck::key_error(
            "is gpt2 (byte-level BPE), but Gemma 2's converter class reads only a "
            "SentencePiece tokenizer.model",
            "tokenizer.ggml.model");
    if (style == TokenizerStyle::llama && is_sentencepiece_as_bpe(bpe_model_and_decoder(*family)))
        throw ck::key_error("'" + t.pre +
                                "' is a SentencePiece vocabulary saved as BPE, which Llama's "
                                "converter class reads with LlamaHfVocab, as ckhost does not",
                            "tokenizer.ggml.pre");
    return *family;
}

}  // namespace

std::vector<ExportedFile> export_byte_level_bpe(const GgufTokenizer& t, TokenizerStyle style) {
    const BpeFamily& family = bpe_family_for(t, style);
    for (std::size_t i = 0; i < t.merges.size(); ++i)
        require_json_text(t.merges[i], "tokenizer.ggml.merges", "merge " + std::to_string(i));
    BpeLayout layout = bpe_layout(t, family);
    const ordered_json specials = bpe_specials(t, layout);
    BpeTokenizerJson doc;
    doc.family = &family;
    doc.texts = &layout.texts;
    doc.vocab = std::move(layout.vocab);
    doc.added = layout.added;
    doc.merges = &t.merges;
    doc.post_processor = choose_post_processor(t, family, specials);
    if (const auto unk = t.id_of("unk"); unk && family.sentencepiece_layout)
        doc.unk_token = std::string(layout.texts[*unk]);
    TokenizerConfigParts parts;
    for (const AddedTokenEntry& added : layout.added)
        parts.decoder.push_back({added.id, std::string(layout.texts[added.id]), added.special});
    parts.specials = specials;
    // Phi-3's class reads tokenizer.json only when the class is GPT2Tokenizer.
    parts.tokenizer_class =
        style == TokenizerStyle::phi3 ? "GPT2Tokenizer" : family.tokenizer_class;
    parts.clean_up_tokenization_spaces = family.clean_up_tokenization_spaces;
    return {{"tokenizer.json", tokenizer_json_text(doc)},
            {"tokenizer_config.json", tokenizer_config_text(t, parts, style)}};
}

}  // namespace ckplugin::hf
