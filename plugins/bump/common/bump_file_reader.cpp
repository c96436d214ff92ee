#include "bump_file_reader.hpp"

#include <map>

#include "ck/error.hpp"
#include "ck/support/byte_cursor.hpp"
#include "dtype_codes.hpp"
#include "sha256_stream.hpp"

namespace ckplugin::bump {
using namespace ck;

namespace {

constexpr std::uint64_t table_offset = header_bytes;  // u32 N, then N dtype bytes

// Why a file is not the bump file asked for. What else it is, and which reader opens it, the
// host adds from the readers' probes (one place for every reader), so this stays short.
std::string not_bump_reason(const unsigned char* head, std::size_t size, std::uint32_t version) {
    if (const auto found = bump_version(head, size))
        return "a bump v" + std::to_string(*found) + " file, not v" + std::to_string(version);
    return "not a bump file (the magic is neither " + std::string(v3_magic) + " nor " +
           std::string(v4_magic) + ")";
}

}  // namespace

std::span<const std::byte, header_bytes> BumpFileReader::map_file(const std::filesystem::path& path,
                                                                  std::uint32_t version) {
    path_ = path;
    name_ = path.string();
    table_.clear();
    entries_.clear();
    payload_start_ = payload_end_ = 0;
    tensors_.open(path);
    const auto* head = reinterpret_cast<const unsigned char*>(tensors_.file().data());
    if (bump_version(head, file_size()) != version)
        throw Error(not_bump_reason(head, file_size(), version), name_, 0);
    if (file_size() < table_offset + 4)
        throw Error("file ends inside the header (" + std::to_string(file_size()) + " bytes, a " +
                        (version == 4 ? "bump v4" : "bump") + " file has at least 132)",
                    name_, file_size());
    return std::span<const std::byte, header_bytes>(tensors_.file().data(), header_bytes);
}

void BumpFileReader::expect_version(std::uint32_t found, std::uint32_t expected) const {
    if (found != expected)
        throw Error("version " + std::to_string(found) + ", expected " + std::to_string(expected),
                    name_, magic_bytes, "field 'version'");
}

std::uint64_t BumpFileReader::table_count() const {
    support::ByteCursor in(tensors_.file().data(), file_size(), name_);
    in.seek(table_offset, "the dtype table");
    return in.read<std::uint32_t>("the dtype table count");
}

void BumpFileReader::read_table(
    std::uint64_t count, const std::function<std::string(std::uint8_t, std::size_t)>& refusal,
    const std::function<std::string(std::size_t)>& subject) {
    payload_start_ = table_offset + 4 + count;
    if (file_size() < payload_start_)
        throw Error("file ends inside the dtype table (" + std::to_string(file_size()) +
                        " bytes, the table ends at " + std::to_string(payload_start_) + ")",
                    name_, file_size());
    const auto* codes = reinterpret_cast<const std::uint8_t*>(tensors_.file().data());
    table_.clear();
    for (std::size_t i = 0; i < count; ++i) {
        const std::uint8_t code = codes[table_offset + 4 + i];
        if (const std::string why = refusal(code, i); !why.empty())
            throw Error("dtype code " + std::to_string(code) + " (" +
                            std::string(dtype_name(code)) + ") " + why,
                        name_, table_offset + 4 + i, subject(i));
        table_.push_back(code);
    }
}

void BumpFileReader::place_entries(std::vector<TensorInfo> entries, const std::string& described_by,
                                   std::string_view unit) {
    entries_ = std::move(entries);
    std::uint64_t offset = payload_start_;
    for (TensorInfo& t : entries_) {
        t.source_offset = offset;
        tensors_.add(offset, t.nbytes);
        offset += t.nbytes;
    }
    payload_end_ = offset;
    if (file_size() < payload_end_)
        throw Error("file is " + std::to_string(file_size()) + " bytes, but " + described_by +
                        " describe " + std::to_string(payload_end_) + " (truncated?)",
                    name_, file_size());
    if (file_size() > payload_end_)
        context_.warn(name_ + ": " + std::to_string(file_size() - payload_end_) +
                      " bytes after the last " + std::string(unit));
}

ModelHeader BumpFileReader::model_header(Facts facts) const {
    ModelHeader out;
    out.source = name_;
    out.format = "bump";
    out.tensors = entries_;
    out.format_facts = std::move(facts);
    return out;
}

Facts BumpFileReader::table_facts() const {
    std::map<std::uint8_t, std::size_t> per_code;
    for (std::uint8_t code : table_) ++per_code[code];
    Facts facts = {{"dtype table offset", std::to_string(table_offset + 4)},
                   {"dtype table entries", std::to_string(table_.size())}};
    for (auto [code, n] : per_code)
        facts.emplace_back("dtype table " + std::string(dtype_name(code)), std::to_string(n));
    facts.emplace_back("payload start", std::to_string(payload_start_));
    facts.emplace_back("file size", std::to_string(file_size()));
    return facts;
}

void BumpFileReader::expect_no_trailing_bytes(std::string_view unit) const {
    if (file_size() != payload_end_)
        throw Error(std::to_string(file_size() - payload_end_) + " bytes after the last " +
                        std::string(unit) + " (the file should be " + std::to_string(payload_end_) +
                        " bytes)",
                    name_, payload_end_);
}

void BumpFileReader::expect_llama_heads(std::uint32_t model_type, std::uint32_t num_heads,
                                        std::uint32_t head_dim, std::uint32_t embed_dim) const {
    if (model_type != 1)
        throw Error("model_type " + std::to_string(model_type) + ", expected 1", name_, 0x0C);
    if (std::uint64_t(num_heads) * head_dim != embed_dim)
        throw Error(
            "num_heads * head_dim = " + std::to_string(std::uint64_t(num_heads) * head_dim) +
                ", expected embed_dim " + std::to_string(embed_dim),
            name_, 0x24);
}

void BumpFileReader::expect_reserved_zero(std::size_t reserved_from) const {
    for (std::size_t i = reserved_from; i < header_bytes; ++i)
        if (tensors_.file().data()[i] != std::byte{0})
            throw Error("reserved header bytes are not zero", name_, i);
}

void BumpFileReader::expect_checksum(const Digest& stated, std::size_t checksum_at) const {
    // Read the file again rather than the mapping: verifying a many-GB file should not make
    // all of it resident in this process.
    const Digest actual = sha256_of_file(path_, header_bytes);
    if (actual != stated)
        throw Error("checksum mismatch: the header says " + hex(stated) +
                        ", bytes 128 to the end hash to " + hex(actual),
                    name_, checksum_at);
}

}  // namespace ckplugin::bump
