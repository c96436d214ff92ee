// Loading llama-imatrix's files the way llama-quantize does (common/imatrix-loader.cpp and
// tools/quantize/quantize.cpp of llama.cpp, as docs/formats/imatrix.md describes them).
#include "importance_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "ck/context.hpp"
#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/mapped_file.hpp"
#include "ck/support/byte_cursor.hpp"
#include "ck/support/little_endian.hpp"
#include "gguf_reader.hpp"

namespace ckplugin::quantize {
namespace {

constexpr std::string_view sums_suffix = ".in_sum2";
constexpr std::string_view counts_suffix = ".counts";

// Read from the file's first bytes, not a mapping: a GGUF matrix is then mapped once, by the
// GGUF reader. A file that cannot be read is not GGUF here; mapping it for parse_dat then
// reports why.
bool starts_with_gguf_magic(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    in.read(magic, sizeof magic);
    // Either byte order spells the magic the same way: it is four characters, not a number.
    return in.gcount() == sizeof magic && std::memcmp(magic, "GGUF", sizeof magic) == 0;
}

// A string stored with a length prefix, cut at its first NUL as llama.cpp's C strings are.
std::string c_string(std::span<const std::byte> bytes) {
    const auto* begin = reinterpret_cast<const char*>(bytes.data());
    return std::string(begin, strnlen(begin, bytes.size()));
}

std::vector<float> floats_of(const ck::TensorView& view) {
    std::vector<float> out(view.size() / sizeof(float));
    ck::le::load_array(view.data(), out.data(), out.size());
    return out;
}

// The in_sum2 and counts tensors of each entry name.
struct SumsAndCounts {
    std::optional<std::size_t> sums;
    std::optional<std::size_t> counts;
};

std::map<std::string, SumsAndCounts> pair_entries(const ck::ModelHeader& header) {
    std::map<std::string, SumsAndCounts> pairs;
    for (std::size_t i = 0; i < header.tensors.size(); ++i) {
        const std::string& name = header.tensors[i].name;
        if (name.ends_with(sums_suffix))
            pairs[name.substr(0, name.size() - sums_suffix.size())].sums = i;
        else if (name.ends_with(counts_suffix))
            pairs[name.substr(0, name.size() - counts_suffix.size())].counts = i;
    }
    return pairs;
}

// sums / count per expert (count as llama-quantize rounds it), 1 for an expert never reached.
std::vector<float> normalize(const std::vector<float>& sums, const std::vector<float>& counts,
                             const std::string& name, const std::string& file) {
    if (counts.empty() || sums.size() % counts.size() != 0)
        throw ck::tensor_error("has " + std::to_string(sums.size()) + " sums for " +
                                   std::to_string(counts.size()) +
                                   " counts: not a whole number of columns per expert",
                               name, file);
    const std::size_t columns = sums.size() / counts.size();
    std::vector<float> weights(sums.size());
    for (std::size_t j = 0; j < counts.size(); ++j) {
        const auto count = static_cast<float>(std::lround(counts[j]));
        for (std::size_t i = 0; i < columns; ++i)
            weights[j * columns + i] = count > 0.0f ? sums[j * columns + i] / count : 1.0f;
    }
    return weights;
}

}  // namespace

ImportanceMatrix ImportanceMatrix::load(const std::filesystem::path& path) {
    const ImportanceMatrix loaded =
        starts_with_gguf_magic(path)
            ? load_gguf(path)
            : parse_dat(ck::MappedFile::open(path)->bytes(), path.string());
    loaded.refuse_non_finite(path.string());
    return loaded;
}

ImportanceMatrix ImportanceMatrix::load_gguf(const std::filesystem::path& path) {
    const std::string file = path.string();
    ck::RecordingContext quiet;  // the container's own warnings are not the user's business here
    ckplugin::gguf::GgufReader reader(quiet);
    const ck::ModelHeader header = reader.open(path);
    if (header.tensors.empty()) throw ck::file_error("importance matrix has no entries", file);
    for (const char* key : {"imatrix.datasets", "imatrix.chunk_count", "imatrix.chunk_size"})
        if (!header.metadata.contains(key))
            throw ck::key_error("missing imatrix metadata (llama-quantize refuses it too)", key,
                                file);
    ImportanceMatrix out;
    const ck::Value& datasets = *header.metadata.find("imatrix.datasets");
    if (datasets.type() == ck::ValueType::array &&
        datasets.array().element_type() == ck::ValueType::string && datasets.array().size() > 0)
        out.dataset_ = std::string(datasets.array().string_at(0));
    const std::optional<std::uint64_t> chunks =
        header.metadata.find("imatrix.chunk_count")->as_uint();
    if (!chunks) throw ck::key_error("must be an unsigned integer", "imatrix.chunk_count", file);
    out.chunk_count_ = static_cast<std::int64_t>(static_cast<std::uint32_t>(*chunks));
    for (const auto& [name, pair] : pair_entries(header)) {
        if (!pair.sums || !pair.counts)
            throw ck::tensor_error("has no " + std::string(pair.sums ? "counts" : "in_sum2") +
                                       " tensor beside its " + (pair.sums ? "in_sum2" : "counts"),
                                   name, file);
        for (const std::size_t i : {*pair.sums, *pair.counts})
            if (header.tensors[i].type != static_cast<std::uint32_t>(ck::GgmlType::f32))
                throw ck::tensor_error(
                    "must be F32, not " + std::string(ck::type_name(header.tensors[i].type)),
                    header.tensors[i].name, file);
        out.entries_[name] = normalize(floats_of(reader.tensor(*pair.sums)),
                                       floats_of(reader.tensor(*pair.counts)), name, file);
    }
    return out;
}

ImportanceMatrix ImportanceMatrix::parse_dat(std::span<const std::byte> bytes,
                                             const std::string& file) {
    ck::support::ByteCursor in(bytes, file);
    const auto n_entries = in.read<std::int32_t>("entry count");
    if (n_entries < 1) throw ck::file_error("importance matrix has no entries", file, 0);
    ImportanceMatrix out;
    out.legacy_ = true;
    for (std::int32_t e = 0; e < n_entries; ++e) {
        const std::string which = "entry " + std::to_string(e + 1);
        const auto length = in.read<std::int32_t>("name length", which);
        if (length < 0) in.fail("negative name length", in.pos() - 4, which);
        const std::string name =
            c_string(in.bytes(static_cast<std::uint64_t>(length), "name", which));
        const auto ncall = in.read<std::int32_t>("call count", which);
        const std::uint64_t at = in.pos();
        const auto nval = in.read<std::int32_t>("value count", which);
        if (nval < 1 || !in.fits(static_cast<std::uint64_t>(nval), sizeof(float)))
            in.fail("value count " + std::to_string(nval) + " does not fit the file", at,
                    ck::tensor_subject(name));
        std::vector<float> weights(static_cast<std::size_t>(nval));
        for (float& w : weights) {
            const float value = in.read<float>("value", name);
            // The file stores mean * ncall; llama-quantize divides it back out.
            w = ncall > 0 ? value / static_cast<float>(ncall) : value;
        }
        out.entries_[name] = std::move(weights);  // a repeated name: the last one counts
    }
    // The optional trailer: chunk count, then the dataset's name.
    if (in.remaining() >= 4) out.chunk_count_ = in.read<std::int32_t>("chunk count");
    if (in.remaining() >= 4) {
        const auto length = in.read<std::int32_t>("dataset name length");
        if (length > 0 && static_cast<std::uint64_t>(length) <= in.remaining())
            out.dataset_ = c_string(in.bytes(static_cast<std::uint64_t>(length), "dataset name"));
    }
    return out;
}

void ImportanceMatrix::refuse_non_finite(const std::string& file) const {
    for (const auto& [name, weights] : entries_) {
        const auto bad =
            std::find_if(weights.begin(), weights.end(), [](float w) { return !std::isfinite(w); });
        if (bad != weights.end())
            throw ck::tensor_error("has the non-finite weight " + std::to_string(*bad) +
                                       " at column " + std::to_string(bad - weights.begin()),
                                   name, file);
    }
}

void ImportanceMatrix::filter(const std::vector<std::string>& include,
                              const std::vector<std::string>& exclude) {
    const auto contains_any = [](const std::string& name, const std::vector<std::string>& texts) {
        return std::any_of(texts.begin(), texts.end(), [&name](const std::string& text) {
            return name.find(text) != std::string::npos;
        });
    };
    std::erase_if(entries_, [&](const auto& entry) {
        return contains_any(entry.first, exclude) ||
               (!include.empty() && !contains_any(entry.first, include));
    });
}

const ImportanceMatrix::Entry* ImportanceMatrix::find(std::string_view name) const {
    const auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace ckplugin::quantize
