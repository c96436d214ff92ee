#include "sentencepiece_model_writer.hpp"

#include <bit>
#include <cstdint>
#include <string_view>

namespace ckplugin::hf {
namespace {

enum WireType : std::uint32_t { wire_varint = 0, wire_bytes = 2, wire_fixed32 = 5 };

// Fields in ascending number order, as protobuf's own serializer writes them.
class ProtoWriter {
  public:
    void varint_field(std::uint32_t field, std::uint64_t value) {
        key(field, wire_varint);
        varint(value);
    }
    // int32 as protobuf encodes it: a negative value sign-extended to ten bytes.
    void int32_field(std::uint32_t field, int value) {
        varint_field(field, static_cast<std::uint64_t>(static_cast<std::int64_t>(value)));
    }
    void bool_field(std::uint32_t field, bool value) { varint_field(field, value ? 1 : 0); }
    void float_field(std::uint32_t field, float value) {
        key(field, wire_fixed32);
        const auto bits = std::bit_cast<std::uint32_t>(value);
        for (int shift = 0; shift < 32; shift += 8)
            bytes_ += static_cast<char>((bits >> shift) & 0xff);  // little-endian
    }
    // A string, bytes or embedded message.
    void bytes_field(std::uint32_t field, std::string_view bytes) {
        key(field, wire_bytes);
        varint(bytes.size());
        bytes_ += bytes;
    }
    const std::string& bytes() const { return bytes_; }

  private:
    void key(std::uint32_t field, WireType wire) { varint((std::uint64_t(field) << 3) | wire); }
    void varint(std::uint64_t value) {
        for (; value >= 0x80; value >>= 7) bytes_ += static_cast<char>((value & 0x7f) | 0x80);
        bytes_ += static_cast<char>(value);
    }
    std::string bytes_;
};

// sentencepiece_model.proto's field numbers.
namespace model_proto {
constexpr std::uint32_t pieces = 1, trainer_spec = 2, normalizer_spec = 3;
}
namespace piece_proto {
constexpr std::uint32_t piece = 1, score = 2, type = 3;
}
namespace trainer_proto {
constexpr std::uint32_t model_type = 3, vocab_size = 4, control_symbols = 30,
                        user_defined_symbols = 31, byte_fallback = 35, unk_id = 40, bos_id = 41,
                        eos_id = 42, pad_id = 43, unk_piece = 45, bos_piece = 46, eos_piece = 47,
                        pad_piece = 48;
constexpr std::uint64_t model_type_bpe = 2;
}  // namespace trainer_proto
namespace normalizer_proto {
constexpr std::uint32_t name = 1, precompiled_charsmap = 2, add_dummy_prefix = 3,
                        remove_extra_whitespaces = 4, escape_whitespaces = 5;
}

std::string piece_bytes(const Piece& piece) {
    ProtoWriter out;
    out.bytes_field(piece_proto::piece, piece.text);
    out.float_field(piece_proto::score, piece.score);
    out.varint_field(piece_proto::type, static_cast<std::uint64_t>(piece.type));
    return out.bytes();
}

// The symbols a trainer records for control (other than bos, eos, pad) and user-defined
// pieces, as SentencePiece's trainer lists them.
void write_symbols(const SentencePieceModel& model, ProtoWriter& out) {
    for (PieceType type : {PieceType::control, PieceType::user_defined})
        for (std::size_t i = 0; i < model.pieces.size(); ++i) {
            const int id = static_cast<int>(i);
            if (model.pieces[i].type != type || id == model.bos_id || id == model.eos_id ||
                id == model.pad_id)
                continue;
            out.bytes_field(type == PieceType::control ? trainer_proto::control_symbols
                                                       : trainer_proto::user_defined_symbols,
                            model.pieces[i].text);
        }
}

std::string trainer_spec_bytes(const SentencePieceModel& model) {
    ProtoWriter out;
    out.varint_field(trainer_proto::model_type, trainer_proto::model_type_bpe);
    out.int32_field(trainer_proto::vocab_size, static_cast<int>(model.pieces.size()));
    write_symbols(model, out);
    bool byte_pieces = false;
    for (const Piece& piece : model.pieces) byte_pieces |= piece.type == PieceType::byte;
    if (byte_pieces) out.bool_field(trainer_proto::byte_fallback, true);
    // Each special piece's id and text fields; the texts only for pieces there are (the
    // trainer's defaults name the others). Ids first, as the field numbers go.
    struct SpecialPiece {
        std::uint32_t id_field, text_field;
        int id;
    };
    const SpecialPiece specials[] = {
        {trainer_proto::unk_id, trainer_proto::unk_piece, model.unk_id},
        {trainer_proto::bos_id, trainer_proto::bos_piece, model.bos_id},
        {trainer_proto::eos_id, trainer_proto::eos_piece, model.eos_id},
        {trainer_proto::pad_id, trainer_proto::pad_piece, model.pad_id}};
    for (const SpecialPiece& special : specials) out.int32_field(special.id_field, special.id);
    for (const SpecialPiece& special : specials)
        if (special.id >= 0 && static_cast<std::size_t>(special.id) < model.pieces.size())
            out.bytes_field(special.text_field,
                            model.pieces[static_cast<std::size_t>(special.id)].text);
    return out.bytes();
}

std::string normalizer_spec_bytes(const SentencePieceModel& model) {
    ProtoWriter out;
    out.bytes_field(normalizer_proto::name, "identity");
    out.bytes_field(normalizer_proto::precompiled_charsmap, "");
    out.bool_field(normalizer_proto::add_dummy_prefix, model.add_dummy_prefix);
    out.bool_field(normalizer_proto::remove_extra_whitespaces, false);
    out.bool_field(normalizer_proto::escape_whitespaces, true);
    return out.bytes();
}

}  // namespace

std::string sentencepiece_model_bytes(const SentencePieceModel& model) {
    ProtoWriter out;
    for (const Piece& piece : model.pieces)
        out.bytes_field(model_proto::pieces, piece_bytes(piece));
    out.bytes_field(model_proto::trainer_spec, trainer_spec_bytes(model));
    out.bytes_field(model_proto::normalizer_spec, normalizer_spec_bytes(model));
    return out.bytes();
}

}  // namespace ckplugin::hf
