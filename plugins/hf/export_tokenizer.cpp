#include "export_tokenizer.hpp"

#include <unordered_map>
#include <unordered_set>

#include "ck/error.hpp"
#include "export_bpe_tokenizer.hpp"
#include "sentencepiece_model_writer.hpp"
#include "special_vocab.hpp"
#include "tokenizer_config_writer.hpp"
#include "tokenizer_metadata.hpp"

using nlohmann::json;
using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

constexpr std::string_view exported_tokens_key = "tokenizer.ggml.tokens";
constexpr std::string_view exported_model_key = "tokenizer.ggml.model";
constexpr const char* metaspace_symbol = "\xe2\x96\x81";  // U+2581, SentencePiece's space

// ---- SentencePiece: tokenizer.model -----------------------------------------------------------

// A token the converter put over the vocabulary from tokenizer_config.json's
// added_tokens_decoder (or added_tokens.json): CONTROL with score -1000, or USER_DEFINED (a
// piece of that type reads as NORMAL, so every USER_DEFINED token came from there).
bool is_added_over_pieces(const GgufTokenizer& t, std::size_t id) {
    return t.types[id] == token_type(PieceType::user_defined) ||
           (t.types[id] == token_type(PieceType::control) && t.scores[id] == -1000.0f);
}

// How many of the tokens are the model's pieces: all but the trailing [PADn] pads, and (except
// in Gemma's layout, where every added token is also a piece) but the added tokens after the
// last piece, which Phi-3 and fine-tunes of Llama append beyond the model.
std::size_t piece_count(const GgufTokenizer& t, TokenizerStyle style) {
    const bool gemma = style == TokenizerStyle::gemma || style == TokenizerStyle::gemma3;
    for (std::size_t n = t.tokens.size(); n > 0; --n)
        if (!is_converter_pad(t, n - 1) && (gemma || !is_added_over_pieces(t, n - 1))) return n;
    throw ck::key_error("has no SentencePiece pieces: every token is a [PADn] pad or added",
                        exported_tokens_key);
}

// The unknown piece a SentencePiece model needs: unknown_token_id, else the UNKNOWN token, else
// "<unk>" (the converter makes the unknown piece CONTROL when tokenizer_config.json lists it).
std::size_t unknown_piece(const GgufTokenizer& t, std::size_t pieces) {
    if (const auto id = t.id_of("unk"); id && *id < pieces) return *id;
    for (std::size_t i = 0; i < pieces; ++i)
        if (t.types[i] == token_type(PieceType::unknown)) return i;
    for (std::size_t i = 0; i < pieces; ++i)
        if (t.tokens[i] == "<unk>") return i;
    throw ck::key_error(
        "is absent, and no piece is UNKNOWN or <unk>: a SentencePiece model needs an unknown "
        "piece",
        "tokenizer.ggml.unknown_token_id");
}

bool is_byte_piece(const std::string& text) {
    const auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); };
    return text.size() == 6 && text.starts_with("<0x") && hex(text[3]) && hex(text[4]) &&
           text[5] == '>';
}

// A piece back with its SentencePiece type: the unknown one UNKNOWN, the others as the GGUF
// has them. An added token's own score is not in the GGUF (-1000 replaced it): 0, as
// SentencePiece gives control and user-defined pieces.
Piece piece_of(const GgufTokenizer& t, std::size_t i, std::size_t unk) {
    Piece piece{std::string(t.tokens[i]), t.scores[i], static_cast<PieceType>(t.types[i])};
    if (is_added_over_pieces(t, i)) piece.score = 0;
    if (i == unk) {
        piece.type = PieceType::unknown;
    } else if (piece.type == PieceType::unknown) {
        throw ck::key_error(token_label(i) + " is a second UNKNOWN token (the first is " +
                                std::to_string(unk) + "): a SentencePiece model has one",
                            "tokenizer.ggml.token_type");
    }
    if (piece.type == PieceType::byte && !is_byte_piece(piece.text))
        throw ck::key_error(
            token_label(i) + " is a BYTE token but not <0xXX>: '" + piece.text + "'",
            exported_tokens_key);
    if (piece.text.empty())
        throw ck::key_error(token_label(i) + " is empty, which a SentencePiece piece cannot be",
                            exported_tokens_key);
    return piece;
}

// Where an added token goes so that the reader gives it back as it is: added_tokens.json for a
// user-defined token the common rule would change (one that looks special, which it would make
// CONTROL, or with U+2581, which it would make a space); tokenizer_config.json otherwise.
bool goes_to_added_tokens_json(const GgufTokenizer& t, std::size_t i, TokenizerStyle style) {
    return style != TokenizerStyle::phi3 && t.types[i] == token_type(PieceType::user_defined) &&
           (looks_special(std::string(t.tokens[i])) ||
            t.tokens[i].find(metaspace_symbol) != std::string_view::npos);
}

struct SentencePieceExport {
    SentencePieceModel model;
    std::vector<DecoderEntry> decoder;
    json added_tokens_json = json::object();
};

// A user-defined piece's spaces were U+2581 (the common rule made them spaces; a piece holds
// none): back, unless another piece has that text.
void restore_metaspace(const GgufTokenizer& t, TokenizerStyle style, SentencePieceExport& e) {
    if (style == TokenizerStyle::phi3) return;
    std::unordered_set<std::string> texts;
    for (const Piece& piece : e.model.pieces) texts.insert(piece.text);
    for (std::size_t i = 0; i < e.model.pieces.size(); ++i) {
        Piece& piece = e.model.pieces[i];
        if (piece.type != PieceType::user_defined || goes_to_added_tokens_json(t, i, style) ||
            piece.text.find(' ') == std::string::npos)
            continue;
        std::string restored = spaces_as_metaspace(piece.text);
        if (texts.insert(restored).second) piece.text = std::move(restored);
    }
}

void check_unique_pieces(const std::vector<Piece>& pieces) {
    std::unordered_map<std::string_view, std::size_t> seen;
    for (std::size_t i = 0; i < pieces.size(); ++i)
        if (const auto [at, fresh] = seen.emplace(pieces[i].text, i); !fresh)
            throw ck::key_error(token_label(at->second) + " and " + std::to_string(i) +
                                    " are both '" + pieces[i].text +
                                    "': a SentencePiece model holds each piece once",
                                exported_tokens_key);
}

// The added tokens, each where the reader takes it back from.
void route_added_tokens(const GgufTokenizer& t, TokenizerStyle style, SentencePieceExport& e) {
    for (std::size_t i = 0; i < t.tokens.size(); ++i) {
        if (is_converter_pad(t, i) || !is_added_over_pieces(t, i)) continue;
        if (goes_to_added_tokens_json(t, i, style)) {
            require_json_text(t.tokens[i], exported_tokens_key, token_label(i));
            e.added_tokens_json[std::string(t.tokens[i])] = i;
            continue;
        }
        const bool piece = i < e.model.pieces.size();
        e.decoder.push_back({static_cast<std::uint32_t>(i),
                             piece ? e.model.pieces[i].text : std::string(t.tokens[i]),
                             t.types[i] == token_type(PieceType::control)});
    }
}

int piece_id(const GgufTokenizer& t, std::string_view type, std::size_t pieces) {
    const auto id = t.id_of(type);
    return id && *id < pieces ? static_cast<int>(*id) : -1;
}

SentencePieceExport sentencepiece_export(const GgufTokenizer& t, TokenizerStyle style) {
    const std::size_t pieces = piece_count(t, style);
    const std::size_t unk = unknown_piece(t, pieces);
    SentencePieceExport e;
    for (std::size_t i = 0; i < pieces; ++i) e.model.pieces.push_back(piece_of(t, i, unk));
    restore_metaspace(t, style, e);
    check_unique_pieces(e.model.pieces);
    route_added_tokens(t, style, e);
    e.model.unk_id = static_cast<int>(unk);
    e.model.bos_id = piece_id(t, "bos", pieces);
    e.model.eos_id = piece_id(t, "eos", pieces);
    e.model.pad_id = piece_id(t, "pad", pieces);
    e.model.add_dummy_prefix = t.add_space_prefix.value_or(true);
    return e;
}

// The special token texts: for SentencePiece the reader takes every id from config.json, so
// these are for transformers only; the unknown piece is named even when the GGUF has no id.
ordered_json sentencepiece_specials(const GgufTokenizer& t, const SentencePieceExport& e) {
    ordered_json specials = special_flags(t);
    const auto text = [&](std::uint32_t id) {
        return id < e.model.pieces.size() ? e.model.pieces[id].text : std::string(t.tokens[id]);
    };
    for (const SpecialTokenId& special : t.special_ids)
        if (special.type != "eot" && special.type != "eom")
            specials[special.type + "_token"] = text(special.id);
    specials["unk_token"] = e.model.pieces[static_cast<std::size_t>(e.model.unk_id)].text;
    return specials;
}

std::vector<ExportedFile> export_sentencepiece(const GgufTokenizer& t, TokenizerStyle style) {
    if (style == TokenizerStyle::gpt2)
        throw ck::key_error(
            "is llama (SentencePiece), but this family's converter class reads only a BPE "
            "tokenizer.json",
            exported_model_key);
    const SentencePieceExport e = sentencepiece_export(t, style);
    TokenizerConfigParts parts;
    parts.decoder = e.decoder;
    parts.specials = sentencepiece_specials(t, e);
    const bool gemma = style == TokenizerStyle::gemma || style == TokenizerStyle::gemma3;
    parts.tokenizer_class = gemma ? "GemmaTokenizer" : "LlamaTokenizer";
    std::vector<ExportedFile> files = {{"tokenizer.model", sentencepiece_model_bytes(e.model)}};
    if (!e.added_tokens_json.empty())
        files.push_back({"added_tokens.json", e.added_tokens_json.dump(2, ' ', false) + "\n"});
    files.push_back({"tokenizer_config.json", tokenizer_config_text(t, parts, style)});
    return files;
}

}  // namespace

std::vector<ExportedFile> export_tokenizer(const ck::ModelHeader& header,
                                           const Architecture& architecture) {
    const GgufTokenizer tokenizer = read_gguf_tokenizer(header.metadata);
    if (tokenizer.model == "llama") return export_sentencepiece(tokenizer, architecture.tokenizer);
    return export_byte_level_bpe(tokenizer, architecture.tokenizer);
}

}  // namespace ckplugin::hf
