// What the input is between planning and commit, so that a conversion never commits outputs
// built from an input that changed underneath it (docs/decisions/0031), and never replaces a
// file it reads (a writer's side file landing on the input's own: bump's config.json).
#pragma once

#include <sys/types.h>

#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace ckhost {

// One file as stat(2) names it: which file, its size and its modification time.
struct FileIdentity {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    timespec modified{};
};
std::optional<FileIdentity> identity_of(const std::filesystem::path& path);

// The input's identity, taken before the reader opens it. A file is the file; a folder (a
// checkpoint, a bump folder) is the folder and the files directly in it: the folder's own size
// and time change whenever a file is created in it, which writing an output there does.
struct InputIdentity {
    std::filesystem::path path;
    std::optional<FileIdentity> self;
    bool folder = false;
    std::map<std::filesystem::path, FileIdentity> files;  // a folder's, by normal path
};
InputIdentity input_identity_of(const std::filesystem::path& input);

// Before commit: `before`'s path must still name the same, unchanged file (a folder: the same
// folder, and each of its files the conversion reads unchanged). Throws naming the file.
void check_input_unchanged(const InputIdentity& before);

// After planning (the reader has mapped what it reads): refuses, as an output error, an output
// whose target is a file the conversion reads (the input file, the files the reader mapped, a
// checkpoint's configuration and tokenizer files). `in_place` allows it when the writer writes
// the reader's own format (gguf:meta:gguf editing a file in place); `writer`'s file of another
// format there (bump's config.json over a checkpoint's) would destroy the input.
void refuse_replacing_the_input(const InputIdentity& input, const std::filesystem::path& output,
                                const std::string& writer, bool in_place);

}  // namespace ckhost
