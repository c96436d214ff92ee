// What made a set of outputs, recorded beside them so that `--update` and batch re-runs can
// tell an up-to-date result from a stale one. Modification times alone cannot: an output made
// by another pipeline (mix=q6_k, now mix=q2_k) or by an older ckhost is newer than its input
// all the same. The recipe is the pipeline with its options, the input's identity, and ckhost's
// and every stage's plugin version and file digest; the record adds each output's size and
// modification time, so an output edited or replaced since is not trusted either.
//
// The record is `FIRST_OUTPUT.ckhost.json` (docs/decisions/0001-update-recipes.md). It is written
// only by conversions run with --update (batch jobs always are), removed just before such a
// conversion commits new outputs, and written again right after: a crash in between leaves no
// record, and the next run converts again.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ckhost {

// Where the record of a conversion with these outputs lives.
std::filesystem::path recipe_path(const std::vector<std::filesystem::path>& outputs);

// The input's identity: size, modification time (ns) and inode of the file, or of every regular
// file in it when it is a directory (a Hugging Face checkpoint). The device number is left out:
// the same network file system has a different one on every node of a cluster.
nlohmann::json input_identity(const std::filesystem::path& input);

// The SHA-256 of a program or plugin file, computed once per process.
std::string file_digest(const std::filesystem::path& path);

// This ckhost's build as a recipe names it: its version, and the digests of the program and of
// the SDK library the plugins share ({"version", "sha256", "sdk_sha256"}).
nlohmann::json ckhost_build_identity();

// The reason given when none of the outputs exists: nothing is converted *again*.
inline constexpr const char* no_output_yet = "no output exists yet";

struct Freshness {
    bool up_to_date = false;
    std::string reason;  // why not ("" when up to date)
};

// Whether the record beside `outputs` says they were made by `recipe` and are unchanged since.
Freshness check_recipe(const nlohmann::json& recipe,
                       const std::vector<std::filesystem::path>& outputs);

// Removes the record (before new outputs replace the old ones); a missing one is fine.
void forget_recipe(const std::vector<std::filesystem::path>& outputs);

// Writes the record of `recipe` with the outputs as they are now (after commit), through a
// temporary file renamed into place.
void record_recipe(const nlohmann::json& recipe, const std::vector<std::filesystem::path>& outputs);

}  // namespace ckhost
