#include "bump_versions.hpp"

#include <fstream>

#include "bump_v3_reader.hpp"
#include "bump_v3_writer.hpp"
#include "bump_v4_reader.hpp"
#include "bump_v4_writer.hpp"
#include "ck/error.hpp"
#include "fixed_header.hpp"

namespace ckplugin::bump {

bool has_magic(const unsigned char* head, std::size_t size, const char*) noexcept {
    return bump_version(head, size).has_value();
}

ck::ModelHeader BumpReader::open(const std::filesystem::path& path) {
    // Only the magic is read here; the version's reader maps the file and says what is wrong
    // with it, one that cannot be read included.
    unsigned char head[magic_bytes] = {};
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(head), sizeof head);
    const auto version = bump_version(head, static_cast<std::size_t>(in.gcount()));
    if (version == 4)
        reader_ = std::make_unique<BumpV4Reader>(context_);
    else
        reader_ = std::make_unique<BumpV3Reader>(context_);
    return reader_->open(path);
}

ck::TensorView BumpReader::tensor(std::size_t index) {
    if (!reader_) throw ck::Error("bump reader: tensor() before open()");
    return reader_->tensor(index);
}

void BumpReader::verify() {
    if (!reader_) throw ck::Error("bump reader: verify() before open()");
    reader_->verify();
}

ck::Writer* create_writer(const ck::Options& options, ck::Context& context) {
    const std::string version = options.get("version", "3");
    if (version == "3") return new BumpV3Writer(options, context);
    if (version == "4") return new BumpV4Writer(options, context);
    throw ck::usage_error("option version=" + version + ": expected 3 or 4");
}

}  // namespace ckplugin::bump
