// PayloadWriter: what the bump v3 and v4 writers share around their own plans. The options both
// take (context=N, config=PATH), the refusal of scaled RoPE and the input file named in a plan's
// errors, the destination (`-o DIR/`, a new directory, name.bump) and config.json beside it, the
// dtype table, and the payload: written and hashed (SHA-256, on a second thread) as the tensors
// arrive, with the 128-byte header patched in last.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ck/context.hpp"
#include "ck/model.hpp"
#include "ck/options.hpp"
#include "ck/stage.hpp"
#include "fixed_header.hpp"
#include "hashed_payload.hpp"

namespace ckplugin::bump {

class PayloadWriter : public ck::Writer {
  public:
    // Both versions take headpack's padded heads (v4 only at its own alignment).
    std::vector<std::string> understood_keys() const override;

  protected:
    // `format` ("bump v3") is said in messages; `stage` is the writer as the user spells it
    // with an option, up to the option ("bump[" or "bump[version=4,"), for the advice.
    PayloadWriter(const ck::Options& options, ck::Context& context, std::string format,
                  std::string stage);

    // `name=...` as a usage example of this writer's options: "bump[context=N]".
    std::string stage_with(const std::string& option) const { return stage_ + option + "]"; }
    // The path option `key` (config, manifest, map), if given; a usage error when empty.
    std::optional<std::filesystem::path> path_option(const ck::Options& options,
                                                     const std::string& key) const;

    // Keeps `header`, refuses scaled RoPE (first: no other change to the model gets past it),
    // then runs `plan`; an error of it that names no file names the input.
    void plan_input(const ck::ModelHeader& header, const std::function<void()>& plan);
    // Sets bump_path_ (`-o DIR/`, an existing directory or a new path without .bump:
    // DIR/weights.bump; otherwise the path as given) and config_path_ (beside it, unless
    // config=PATH). Returns whether the destination is taken as a new directory.
    bool place_outputs(const std::filesystem::path& destination);
    // After place_outputs and every other path: refuses two outputs that are one file, and says
    // when the destination became a new directory holding the bump file and `beside`.
    void check_outputs(const std::filesystem::path& destination, bool new_directory,
                       const std::string& beside);
    // "bump: N tensor(s) have no slot in <format> and are not written: a, b" when any are left.
    void warn_unwritten(const std::vector<std::string>& names) const;

    // The dtype table (one code per slot or entry), hashed as the start of the payload.
    void set_dtype_table(std::span<const std::uint8_t> codes);
    // Creates the bump file: the header reserved, the dtype table written.
    void start_payload(ck::OutputSink& out);
    // ck::Error when write() or finish() (`call`) comes before begin().
    void expect_started(std::string_view call) const;
    // The tensor that arrived is not the one the plan expects next (`expected`, a slot or entry
    // name, or "none").
    [[noreturn]] void refuse_order(const std::string& tensor, const std::string& unit,
                                   const std::string& expected) const;
    // finish(): every slot or entry written, the file as large as planned, then the header
    // (given the payload's digest) patched in.
    void finish_payload(
        std::size_t written, std::size_t planned, const std::string& next, const std::string& unit,
        std::uint64_t planned_bytes,
        const std::function<std::array<std::byte, header_bytes>(const Digest&)>& header);

    ck::Context& context_;
    const std::optional<std::uint32_t> context_length_;  // context=N
    const std::string format_;
    const std::string stage_;
    const std::optional<std::filesystem::path> config_override_;
    ck::ModelHeader header_;
    std::filesystem::path bump_path_, config_path_;
    std::vector<std::byte> table_bytes_;  // u32 N + dtype table, hashed with the payload
    // Last member: its hasher is destroyed (joined) first. Whatever else it hashes, a writer
    // waits for before letting it go.
    HashedPayload payload_;
};

}  // namespace ckplugin::bump
