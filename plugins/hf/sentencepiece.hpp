// The pieces of a SentencePiece model (tokenizer.model): each piece's text, score and type.
//
// The file is a protobuf ModelProto; of it we need only field 1, the repeated SentencePiece
// {1: piece (string), 2: score (float), 3: type (enum)}. Everything else (trainer and
// normalizer specs, ...) is skipped by its wire type. A hand-written reader of these three
// fields is ~100 lines with every length bounded by the bytes that remain; Debian's libprotobuf
// would need the .proto compiled at build time, a runtime library in every install, and still
// a conversion of the same three fields.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ckplugin::hf {

// sentencepiece_model.proto's SentencePiece.Type. llama.cpp's token types (llama_token_type,
// tokenizer.ggml.token_type) are numbered the same way.
enum class PieceType : std::uint32_t {
    normal = 1,
    unknown = 2,
    control = 3,
    user_defined = 4,
    unused = 5,
    byte = 6,
};

inline std::int32_t token_type(PieceType t) {
    return static_cast<std::int32_t>(t);
}

struct Piece {
    std::string text;
    float score = 0;
    PieceType type = PieceType::normal;
};

// Reads every piece of `path`; throws ck::Error naming the file and byte offset of a problem.
std::vector<Piece> read_sentencepiece_model(const std::filesystem::path& path);

}  // namespace ckplugin::hf
