// BumpV4Reader: a bump v4 file (BUMPWGT4). The entries' layout follows from the header and the
// dtype table alone; weights_manifest.json beside the file, when present, names the same
// entries with their offsets, and verify() checks that it does (and that they tile the file).
// BumpReader (bump_versions.hpp) hands it the BUMPWGT4 files, so `inspect` and `verify` need no
// new reader name.
#pragma once

#include "bump_file_reader.hpp"
#include "bump_v4.hpp"
#include "ck/stage.hpp"

namespace ckplugin::bump {
using namespace ck;

class BumpV4Reader final : public BumpFileReader {
  public:
    explicit BumpV4Reader(Context& context) : BumpFileReader(context) {}
    ModelHeader open(const std::filesystem::path& path) override;
    void verify() override;

  private:
    // The sections of open(), in file order.
    void read_dtype_table();
    void lay_out();
    Facts format_facts() const;
    void check_manifest() const;

    v4::Header header_;
    std::filesystem::path manifest_path_;
    bool has_manifest_ = false;
};

}  // namespace ckplugin::bump
