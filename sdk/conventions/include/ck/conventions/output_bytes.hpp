// How a writer tells the host the size of each file it will write, from prepare(): a report
// entry per file, under "ckhost.output_bytes:" followed by the file's path, holding the size in
// bytes. The host takes these for `--dry-run`'s plan and for the report's byte counts, which
// would otherwise be the tensors' bytes (a bump file also holds zero slots and a header; a
// GGUF its metadata and padding), and leaves them out of the report's "reports". A report
// entry rather than a Writer method keeps the plugin ABI unchanged; a writer that states
// nothing gets the tensors' bytes, labelled as such.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "ck/context.hpp"

namespace ck::conventions {

inline constexpr std::string_view output_bytes_report_prefix = "ckhost.output_bytes:";

inline void report_output_bytes(Context& context, const std::filesystem::path& file,
                                std::uint64_t bytes) {
    context.report(std::string(output_bytes_report_prefix) + file.string(), std::to_string(bytes));
}

}  // namespace ck::conventions
