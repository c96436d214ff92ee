// The one place that picks a bump version: the reader by the file's magic (BUMPWGT3, BUMPWGT4),
// the writer by the option version=3|4. plugin.cpp's descriptor names both; the test suite and
// the fuzz target open files of either version through BumpReader in process.
#pragma once

#include <memory>

#include "ck/stage.hpp"

namespace ckplugin::bump {

// The descriptor's probe: a bump file of either version.
bool has_magic(const unsigned char* head, std::size_t size, const char* path = nullptr) noexcept;

// A reader of either version: open() reads the magic and hands the file to the reader of that
// version (a file of neither goes to v3's, which says what it expected).
class BumpReader final : public ck::Reader {
  public:
    explicit BumpReader(ck::Context& context) : context_(context) {}
    ck::ModelHeader open(const std::filesystem::path& path) override;
    ck::TensorView tensor(std::size_t index) override;
    void verify() override;

  private:
    ck::Context& context_;
    std::unique_ptr<ck::Reader> reader_;
};

// v3 stays the default: today's pipelines and goldens keep their meaning.
ck::Writer* create_writer(const ck::Options& options, ck::Context& context);

}  // namespace ckplugin::bump
