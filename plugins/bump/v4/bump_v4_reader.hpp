// BumpV4Reader: a bump v4 file (BUMPWGT4). The entries' layout follows from the header and the
// dtype table alone; weights_manifest.json beside the file, when present, names the same
// entries with their offsets, and verify() checks that it does (and that they tile the file).
// BumpReader hands a BUMPWGT4 file to it, so `inspect` and `verify` need no new reader name.
#pragma once

#include <optional>

#include "bump_v4.hpp"
#include "ck/stage.hpp"
#include "ck/support/mapped_tensors.hpp"

namespace ckplugin::bump {
using namespace ck;

class BumpV4Reader {
  public:
    explicit BumpV4Reader(Context& context) : context_(context) {}
    ModelHeader open(const std::filesystem::path& path);
    TensorView tensor(std::size_t index) const { return tensors_.view(index); }
    void verify();

  private:
    struct Laid {
        std::string name;
        std::uint8_t dtype = 0;
        std::uint32_t ggml_type = 0;
        std::vector<std::int64_t> ne;
        std::uint64_t offset = 0;
        std::uint64_t size = 0;
    };
    void lay_out(const std::string& file);
    void check_manifest() const;

    Context& context_;
    std::filesystem::path path_;
    support::MappedTensors tensors_;
    v4::Header header_;
    std::vector<std::uint8_t> dtype_table_;
    std::vector<Laid> entries_;
    std::uint64_t payload_start_ = 0;
    std::filesystem::path manifest_path_;
    bool has_manifest_ = false;
};

}  // namespace ckplugin::bump
