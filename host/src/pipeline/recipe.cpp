#include "pipeline/recipe.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/dll/runtime_symbol_info.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>

#include "ck/error.hpp"
#include "ck/parallel.hpp"
#include "io/checksum.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ckhost {
namespace {

constexpr int record_version = 1;

std::int64_t mtime_ns(const struct stat& st) {
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

json file_identity(const struct stat& st) {
    return {{"size", static_cast<std::uint64_t>(st.st_size)},
            {"mtime_ns", mtime_ns(st)},
            {"inode", static_cast<std::uint64_t>(st.st_ino)}};
}

// Each output's path, size and modification time as they are now; null for a missing one.
json output_identities(const std::vector<fs::path>& outputs) {
    json all = json::array();
    for (const auto& p : outputs) {
        struct stat st {};
        if (::stat(p.c_str(), &st) != 0) {
            all.push_back(nullptr);
            continue;
        }
        all.push_back({{"path", p.string()},
                       {"size", static_cast<std::uint64_t>(st.st_size)},
                       {"mtime_ns", mtime_ns(st)}});
    }
    return all;
}

// Whether a record read back has the shape record_recipe() writes: anything else (an edited or
// truncated file, another version's) is not trusted, and nothing below reads a field that is not
// there or not of its type.
bool well_formed(const json& record) {
    if (!record.is_object() || record.value("ckhost_recipe", json()) != json(record_version))
        return false;
    const auto recipe = record.find("recipe");
    const auto outputs = record.find("outputs");
    if (recipe == record.end() || !recipe->is_object() || outputs == record.end() ||
        !outputs->is_array())
        return false;
    const auto pipeline = recipe->find("pipeline");
    const auto stages = recipe->find("stages");
    const auto ckhost = recipe->find("ckhost");
    if (pipeline == recipe->end() || !pipeline->is_string() || stages == recipe->end() ||
        !stages->is_array() || ckhost == recipe->end() || !ckhost->is_object() ||
        !ckhost->value("version", json()).is_string())
        return false;
    return std::all_of(stages->begin(), stages->end(), [](const json& s) {
        return s.is_object() && s.value("name", json()).is_string() &&
               s.value("options", json()).is_object();
    });
}

// What differs between the recipe recorded (well formed) and the one wanted, in the user's words.
std::string recipe_difference(const json& was, const json& now) {
    // The stages as the user wrote them: names and options, not the plugin builds.
    const auto written = [](const json& recipe) {
        json stages = json::array();
        for (const json& s : recipe.value("stages", json::array()))
            stages.push_back({s.value("name", json()), s.value("options", json())});
        return stages;
    };
    if (written(was) != written(now))
        return "the pipeline changed (the outputs were made by '" + was.value("pipeline", "") +
               "', now '" + now.value("pipeline", "") + "')";
    if (was.value("input", json()) != now.value("input", json()))
        return "the input changed since the outputs were made (its size, modification time or "
               "file)";
    const json none = json::object();
    const auto side = [&none](const json& recipe) -> const json& {
        const auto found = recipe.find("side_inputs");
        return found != recipe.end() && found->is_object() ? *found : none;
    };
    const json& was_side = side(was);
    for (const auto& [path, identity] : side(now).items())
        if (!was_side.contains(path) || was_side.at(path) != identity)
            return "'" + path + "', which a stage reads, changed since the outputs were made";
    if (was.value("ckhost", json()) != now.value("ckhost", json()))
        return "ckhost changed since the outputs were made (version " +
               was["ckhost"].value("version", "?") + ", now " +
               now["ckhost"].value("version", "?") + ", or rebuilt)";
    // Same names and options, so the same number of stages.
    const json& was_stages = was["stages"];
    const json& now_stages = now["stages"];
    for (std::size_t i = 0; i < now_stages.size() && i < was_stages.size(); ++i)
        if (was_stages[i] != now_stages[i])
            return "plugin '" + now_stages[i].value("name", "") +
                   "' changed since the outputs were made";
    return "the recipe recorded differs from this one";
}

}  // namespace

fs::path recipe_path(const std::vector<fs::path>& outputs) {
    if (outputs.empty()) return {};
    fs::path p = outputs.front();
    p += ".ckhost.json";
    return p;
}

json input_identity(const fs::path& input) {
    struct stat st {};
    if (::stat(input.c_str(), &st) != 0) return nullptr;
    if (!S_ISDIR(st.st_mode)) return file_identity(st);
    // A checkpoint folder: its files, by name (the order a directory lists them in is not
    // stable).
    std::map<std::string, json> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(input, ec)) {
        struct stat f {};
        if (::stat(entry.path().c_str(), &f) == 0 && S_ISREG(f.st_mode))
            files[entry.path().filename().string()] = file_identity(f);
    }
    json doc = json::object();
    for (auto& [name, identity] : files) doc[name] = std::move(identity);
    return {{"files", doc}};
}

std::string file_digest(const fs::path& path) {
    static std::mutex mutex;
    static std::map<fs::path, std::string> digests;
    const std::lock_guard lock(mutex);
    auto it = digests.find(path);
    if (it == digests.end()) it = digests.emplace(path, sha256_file(path)).first;
    return it->second;
}

json ckhost_build_identity() {
    const fs::path program = boost::dll::program_location();
    const fs::path sdk = boost::dll::symbol_location_ptr(&ck::thread_count);
    return {{"version", CKHOST_VERSION},
            {"sha256", file_digest(program)},
            {"sdk_sha256", file_digest(sdk)}};
}

Freshness check_recipe(const json& recipe, const std::vector<fs::path>& outputs) {
    std::error_code ec;
    std::size_t present = 0;
    for (const auto& p : outputs) present += fs::exists(p, ec) ? 1 : 0;
    if (present == 0) return {false, no_output_yet};
    if (present < outputs.size()) return {false, "some outputs are missing"};
    const fs::path where = recipe_path(outputs);
    std::ifstream in(where, std::ios::binary);
    if (!in)
        return {false, "no recipe is recorded beside the outputs (" + where.string() +
                           "; they were made without --update or by an older ckhost)"};
    const json record = json::parse(in, nullptr, false);
    if (record.is_discarded() || !well_formed(record))
        return {false, "the recipe record " + where.string() + " is not one this ckhost reads"};
    if (record.value("recipe", json()) != recipe)
        return {false, recipe_difference(record.value("recipe", json::object()), recipe)};
    const json now = output_identities(outputs);
    const json was = record.value("outputs", json::array());
    for (std::size_t i = 0; i < outputs.size(); ++i)
        if (i >= was.size() || was[i] != now[i])
            return {false, "output " + outputs[i].string() + " changed since it was written"};
    return {true, ""};
}

void forget_recipe(const std::vector<fs::path>& outputs) {
    if (outputs.empty()) return;
    const fs::path where = recipe_path(outputs);
    if (std::remove(where.c_str()) != 0 && errno != ENOENT)
        throw ck::Error("cannot remove the old recipe record: " + std::string(std::strerror(errno)),
                        where.string());
}

void record_recipe(const json& recipe, const std::vector<fs::path>& outputs) {
    const fs::path where = recipe_path(outputs);
    if (where.empty()) return;
    const json record = {{"ckhost_recipe", record_version},
                         {"recipe", recipe},
                         {"outputs", output_identities(outputs)}};
    fs::path temporary = where;
    temporary += ".tmp-" + std::to_string(::getpid());
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out << record.dump(2) << "\n";
        if (!out) {
            std::remove(temporary.c_str());
            throw ck::Error("cannot write the recipe record", where.string());
        }
    }
    std::error_code ec;
    fs::rename(temporary, where, ec);
    if (ec) {
        std::remove(temporary.c_str());
        throw ck::Error("cannot write the recipe record: " + ec.message(), where.string());
    }
}

}  // namespace ckhost
