#include "round_trip_check.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include "ck/error.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/support/little_endian.hpp"
#include "gguflite_codec.hpp"
#include "gguflite_reader.hpp"
#include "metadata_text.hpp"

namespace fs = std::filesystem;

namespace ckplugin::gguflite {
using namespace ck;
namespace {

// Compares a chunk: `source` (the writer's input), `fake` (its fake quantization) and
// `reload` (what the file decodes to). Branch-free loops: this runs over every value.
void compare(const float* source, const float* fake, const float* reload, std::uint64_t n,
             TensorCheck& c) {
    if (std::memcmp(fake, reload, n * sizeof(float)) != 0) {
        for (std::uint64_t i = 0; i < n; ++i) {
            const bool same_bits =
                std::bit_cast<std::uint32_t>(fake[i]) == std::bit_cast<std::uint32_t>(reload[i]);
            if (same_bits || (std::isnan(fake[i]) && std::isnan(reload[i]))) continue;
            ++c.mismatches;
            const double d = std::fabs(static_cast<double>(fake[i]) - reload[i]);
            c.max_error_vs_fake = std::max(
                c.max_error_vs_fake, std::isnan(d) ? std::numeric_limits<double>::infinity() : d);
        }
    }
    double worst = 0;
    std::uint64_t non_finite = 0, unreadable = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
        const bool finite = std::fabs(source[i]) <= std::numeric_limits<float>::max();
        const double e = std::fabs(static_cast<double>(source[i]) - reload[i]);
        non_finite += !finite;
        unreadable += finite && !(e == e);  // a finite weight that came back NaN
        worst = finite && e > worst ? e : worst;
    }
    c.non_finite_source += non_finite;
    if (unreadable > 0) worst = std::numeric_limits<double>::infinity();
    c.max_error_vs_source = std::max(c.max_error_vs_source, worst);
}

}  // namespace

RoundTripCheck::RoundTripCheck(fs::path written) : path_(std::move(written)) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0)
        throw Error(std::string("cannot open the output to read it back: ") + std::strerror(errno),
                    path_.string());
}

RoundTripCheck::~RoundTripCheck() {
    if (fd_ >= 0) ::close(fd_);
}

bool RoundTripCheck::passed() const noexcept {
    return std::all_of(results_.begin(), results_.end(),
                       [](const TensorCheck& c) { return c.mismatches == 0; });
}

void RoundTripCheck::read_back(std::uint64_t offset, std::size_t size, std::byte* out) {
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::pread(fd_, out + done, size - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw Error("cannot read back the written bytes (" +
                            std::string(n < 0 ? std::strerror(errno) : "file too short") + ")",
                        path_.string(), offset + done);
        done += static_cast<std::size_t>(n);
    }
}

void RoundTripCheck::check_tensor(const TensorPlan& p, std::uint64_t start, SourceValues& source,
                                  ConsumedPages& pages) {
    TensorCheck c;
    c.name = p.name;
    c.dtype = p.dtype;
    // Whole rows for the quantized dtypes, whole source blocks for the others.
    const std::uint64_t cols = p.dims.back();
    const std::uint64_t step =
        is_quantized(p.dtype) ? std::max<std::uint64_t>(chunk_elements / cols, 1) * cols
                              : std::max<std::uint64_t>(chunk_elements / source.block_size(), 1) *
                                    source.block_size();
    std::vector<float> values(step), fake(step), reload(step);
    std::vector<std::byte> raw;
    const QuantLayout layout =
        is_quantized(p.dtype) ? quant_layout(p.dtype, p.dims[0], cols) : QuantLayout{};
    std::vector<std::uint16_t> scales(std::max<std::uint64_t>(layout.scales_per_row, 1));
    std::vector<std::uint8_t> packed(layout.row_value_bytes);
    for (std::uint64_t first = 0; first < p.elements; first += step) {
        throw_if_interrupted();
        const std::uint64_t n = std::min(step, p.elements - first);
        source.read(first, n, values.data());
        switch (p.dtype) {
            case Dtype::f32:
                std::copy_n(values.data(), n, fake.data());
                raw.resize(n * 4);
                read_back(start + first * 4, raw.size(), raw.data());
                ck::le::load_array(raw.data(), reload.data(), n);
                break;
            case Dtype::f16:
                raw.resize(n * 2);
                read_back(start + first * 2, raw.size(), raw.data());
                for (std::uint64_t i = 0; i < n; ++i) {
                    fake[i] = kernels::f16_to_f32(kernels::f32_to_f16(values[i]));
                    reload[i] =
                        kernels::f16_to_f32(ck::le::load<std::uint16_t>(raw.data() + 2 * i));
                }
                break;
            case Dtype::q8:
            case Dtype::q4: {
                const std::uint64_t row = first / cols, rows = n / cols;
                for (std::uint64_t r = 0; r < rows; ++r) {
                    const float* w = values.data() + r * cols;
                    float* f = fake.data() + r * cols;
                    if (p.dtype == Dtype::q8)
                        quantize_q8_row(w, cols, reinterpret_cast<std::int8_t*>(packed.data()), f);
                    else
                        quantize_q4_row(w, cols, scales.data(), packed.data(), f);
                }
                const std::uint64_t scale_bytes = rows * layout.scales_per_row * 2;
                raw.resize(scale_bytes + rows * layout.row_value_bytes);
                read_back(start + row * layout.scales_per_row * 2, scale_bytes, raw.data());
                read_back(start + layout.scale_bytes() + row * layout.row_value_bytes,
                          raw.size() - scale_bytes, raw.data() + scale_bytes);
                dequantize_rows(p.dtype, layout, raw.data(), raw.data() + scale_bytes, rows,
                                reload.data());
                break;
            }
        }
        compare(values.data(), fake.data(), reload.data(), n, c);
        const auto used = source.bytes_of(first, n);
        pages.release_before(used.data() + used.size());
    }
    results_.push_back(std::move(c));
}

void RoundTripCheck::check_file(const Metadata& metadata, const std::vector<TensorPlan>& plans,
                                std::uint64_t data_start, const std::string& shown_name) {
    auto fail = [&](const std::string& what) {
        throw Error("round-trip check: " + what, shown_name);
    };
    RecordingContext quiet;
    GgufLiteReader reader(quiet);
    ModelHeader header;
    try {
        header = reader.open(path_);
    } catch (const Error& e) {
        throw Error("round-trip check: the written file does not read back: " + e.message(),
                    shown_name, e.offset(), e.subject());
    }
    if (reader.data_start() != data_start) fail("the data section starts elsewhere");
    if (reader.stored().size() != plans.size()) fail("tensor count differs");
    for (std::size_t i = 0; i < plans.size(); ++i) {
        const StoredTensor& s = reader.stored()[i];
        const TensorPlan& p = plans[i];
        if (s.name != p.name || s.dtype != p.dtype || s.dims != p.dims || s.offset != p.offset ||
            s.bytes != p.bytes)
            fail("descriptor of tensor '" + p.name + "' reads back differently");
    }
    if (header.metadata.size() != metadata.size()) fail("metadata key count differs");
    auto back = header.metadata.begin();
    for (const auto& [key, value] : metadata) {
        if (back->first != key || !same_after_round_trip(value, back->second))
            fail("metadata key '" + key + "' reads back differently");
        ++back;
    }
}

}  // namespace ckplugin::gguflite
