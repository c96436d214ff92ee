// Where a writer puts its file(s), from what the user gave as -o.
#pragma once

#include <filesystem>
#include <string_view>

namespace ck::support {

// True when `destination` names a directory: it exists as one, or it ends with '/'.
bool is_directory_destination(const std::filesystem::path& destination);

// For a writer that makes several files (bump's weights.bump and config.json): true when
// `destination` names a directory that does not exist yet, that is, nothing is there, it has no
// trailing '/', and it does not end in the writer's own `extension` (".bump"). `-o newdir`
// then means newdir/, as the user meant, instead of a file named newdir with its companion
// files written beside it, in the current directory. Writers say so in a note.
bool is_new_directory_destination(const std::filesystem::path& destination,
                                  std::string_view extension);

// The file a one-file writer creates: `destination` itself, or, for a directory destination,
// the input's file name inside it with `extension` (".gguf") in place of the input's own. The
// name of a split set's shard (model-00001-of-00003.gguf) stands for its set (model.gguf).
std::filesystem::path single_file_destination(const std::filesystem::path& destination,
                                              const std::filesystem::path& input,
                                              std::string_view extension);

}  // namespace ck::support
