#include "sentencepiece.hpp"

#include <bit>
#include <cstring>

#include "ck/error.hpp"
#include "ck/mapped_file.hpp"
#include "ck/support/little_endian.hpp"

namespace ckplugin::hf {
namespace {

enum WireType : std::uint32_t {
    wire_varint = 0,
    wire_fixed64 = 1,
    wire_bytes = 2,
    wire_fixed32 = 5
};

// A bounded protobuf cursor over [begin, end) of the mapped file.
class ProtoCursor {
  public:
    ProtoCursor(const std::byte* data, std::uint64_t begin, std::uint64_t end,
                const std::string& file)
        : data_(data), at_(begin), end_(end), file_(file) {}

    bool done() const { return at_ >= end_; }
    std::uint64_t offset() const { return at_; }

    std::uint64_t varint(const char* what) {
        std::uint64_t value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (at_ >= end_) fail(std::string("truncated varint (") + what + ")");
            const auto byte = static_cast<std::uint8_t>(data_[at_++]);
            value |= std::uint64_t(byte & 0x7f) << shift;
            if (!(byte & 0x80)) return value;
        }
        fail(std::string("varint longer than 10 bytes (") + what + ")");
    }

    std::uint32_t fixed32() {
        if (end_ - at_ < 4) fail("truncated 32-bit field");
        const auto v = ck::le::load<std::uint32_t>(data_ + at_);  // protobuf is little-endian
        at_ += 4;
        return v;
    }

    // The extent [begin, end) of a length-delimited field's bytes; moves past them.
    std::pair<std::uint64_t, std::uint64_t> bytes(const char* what) {
        const std::uint64_t n = varint(what);
        if (n > end_ - at_)
            fail(std::string(what) + " of " + std::to_string(n) + " bytes runs past its message (" +
                 std::to_string(end_ - at_) + " bytes remain)");
        const std::uint64_t begin = at_;
        at_ += n;
        return {begin, at_};
    }

    void skip(std::uint32_t wire) {
        switch (wire) {
            case wire_varint:
                varint("skipped field");
                return;
            case wire_fixed64:
                if (end_ - at_ < 8) fail("truncated 64-bit field");
                at_ += 8;
                return;
            case wire_bytes:
                bytes("skipped field");
                return;
            case wire_fixed32:
                fixed32();
                return;
            default:
                fail("wire type " + std::to_string(wire) + " is not one protobuf writes");
        }
    }

    [[noreturn]] void fail(const std::string& message) const {
        throw ck::Error(message, file_, at_, "tokenizer.model");
    }

  private:
    const std::byte* data_;
    std::uint64_t at_, end_;
    const std::string& file_;
};

Piece read_piece(const std::byte* data, std::uint64_t begin, std::uint64_t end,
                 const std::string& file) {
    ProtoCursor in(data, begin, end, file);
    Piece piece;
    while (!in.done()) {
        const std::uint64_t key = in.varint("field key");
        const auto field = key >> 3;
        const auto wire = static_cast<std::uint32_t>(key & 7);
        if (field == 1 && wire == wire_bytes) {
            const auto [b, e] = in.bytes("piece");
            piece.text.assign(reinterpret_cast<const char*>(data + b), e - b);
        } else if (field == 2 && wire == wire_fixed32) {
            piece.score = std::bit_cast<float>(in.fixed32());
        } else if (field == 3 && wire == wire_varint) {
            const std::uint64_t type = in.varint("type");
            if (type < 1 || type > 6) in.fail("piece type " + std::to_string(type) + " is unknown");
            piece.type = static_cast<PieceType>(type);
        } else {
            in.skip(wire);
        }
    }
    return piece;
}

}  // namespace

std::vector<Piece> read_sentencepiece_model(const std::filesystem::path& path) {
    const std::string file = path.string();
    const auto mapping = ck::MappedFile::open(path);
    ProtoCursor in(mapping->data(), 0, mapping->size(), file);
    std::vector<Piece> pieces;
    while (!in.done()) {
        const std::uint64_t key = in.varint("field key");
        const auto wire = static_cast<std::uint32_t>(key & 7);
        if ((key >> 3) == 1 && wire == wire_bytes) {
            const auto [b, e] = in.bytes("piece");
            pieces.push_back(read_piece(mapping->data(), b, e, file));
        } else {
            in.skip(wire);
        }
    }
    if (pieces.empty()) throw ck::Error("no pieces: not a SentencePiece model", file, 0);
    return pieces;
}

}  // namespace ckplugin::hf
