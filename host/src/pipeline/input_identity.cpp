#include "pipeline/input_identity.hpp"

#include <sys/stat.h>

#include <string>
#include <vector>

#include "ck/error.hpp"
#include "ck/mapped_file.hpp"

namespace fs = std::filesystem;

namespace ckhost {
namespace {

bool unchanged_since(const FileIdentity& a, const FileIdentity& b) {
    return a.device == b.device && a.inode == b.inode && a.size == b.size &&
           a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec;
}

// A ckhost temporary file (".NAME.ckhost-PID-HOST-XXXXXX", ck/output.hpp): ours or another
// run's work in progress, never part of the input.
bool is_temporary_name(const std::string& name) {
    return name.starts_with('.') && name.find(".ckhost-") != std::string::npos;
}

}  // namespace

std::optional<FileIdentity> identity_of(const fs::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return FileIdentity{st.st_dev, st.st_ino, st.st_size, st.st_mtim};
}

InputIdentity input_identity_of(const fs::path& input) {
    InputIdentity identity{input, identity_of(input), false, {}};
    std::error_code ec;
    if (!identity.self || !fs::is_directory(input, ec)) return identity;
    identity.folder = true;
    for (fs::directory_iterator it(input, ec), end; !ec && it != end; it.increment(ec)) {
        if (is_temporary_name(it->path().filename().string())) continue;
        if (const auto file = identity_of(it->path()); file && fs::is_regular_file(it->path(), ec))
            identity.files.emplace(it->path().lexically_normal(), *file);
    }
    return identity;
}

namespace {

// The files a conversion reads, which an output must not replace: the input file; the files its
// reader has mapped (tensors, the other shards of a set); and for a checkpoint (a folder, or its
// config.json) the folder's configuration, tokenizer and template files, read without a
// mapping. Other files in an input folder (an earlier run's model.gguf) are not read.
std::vector<fs::path> files_read(const InputIdentity& input) {
    std::vector<fs::path> read;
    if (!input.folder) read.push_back(input.path);
    for (const std::string& mapped : ck::mapped_input_paths()) read.emplace_back(mapped);
    fs::path folder;
    if (input.folder)
        folder = input.path;
    else if (input.path.filename() == "config.json")
        folder = input.path.parent_path().empty() ? fs::path(".") : input.path.parent_path();
    std::error_code ec;
    if (!folder.empty())
        for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
            const fs::path extension = it->path().extension();
            if (extension == ".json" || extension == ".jinja" || extension == ".model")
                read.push_back(it->path());
        }
    return read;
}

}  // namespace

void check_input_unchanged(const InputIdentity& before) {
    if (!before.self) return;
    const auto now = identity_of(before.path);
    if (!now)
        throw ck::Error("the file was removed while being read; nothing was written",
                        before.path.string());
    if (!before.folder) {
        if (!unchanged_since(*now, *before.self))
            throw ck::input_changed_error(before.path.string());
        return;
    }
    if (now->device != before.self->device || now->inode != before.self->inode)
        throw ck::input_changed_error(before.path.string());
    // The folder's files the conversion reads, as they were before the reader opened them: other
    // files there (outputs of this run or of another job beside it) may come and go.
    for (const fs::path& read : files_read(before)) {
        const auto was = before.files.find(read.lexically_normal());
        if (was == before.files.end()) continue;
        const auto still = identity_of(read);
        if (!still)
            throw ck::Error("the file was removed while being read; nothing was written",
                            read.string());
        if (!unchanged_since(*still, was->second)) throw ck::input_changed_error(read.string());
    }
}

void refuse_replacing_the_input(const InputIdentity& input, const fs::path& output,
                                const std::string& writer, bool in_place) {
    if (in_place || !input.self) return;
    const auto target = identity_of(output);  // symbolic links followed: what would be replaced
    if (!target) return;
    for (const fs::path& read : files_read(input)) {
        const auto file = identity_of(read);
        if (!file || file->device != target->device || file->inode != target->inode) continue;
        throw ck::output_error(
            "the writer '" + writer + "' would replace " + read.string() +
                ", a file the conversion reads, with one of its own; nothing was written: give "
                "an output " +
                (input.folder ? "outside " + input.path.string() : std::string("elsewhere")),
            output.string());
    }
}

}  // namespace ckhost
