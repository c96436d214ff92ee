// BumpV4Reader: a bump v4 file (BUMPWGT4). The entries' layout follows from the header and the
// dtype table alone; weights_manifest.json beside the file names the same entries with their
// offsets and the weights file's path. verify() requires it (C-Kernel-Engine's runtime reads it
// from there) and checks that it names this file and these entries (and that they tile the
// file); inspect shows whether it is there.
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
