// `ckhost inspect` and `ckhost verify`: open any file a reader plugin recognises.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ck/stage.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost {

struct InspectSettings {
    std::filesystem::path file;
    bool json = false;
    bool tensors = false;
    std::vector<std::string> keys;  // --kv KEY (repeatable): print only these values, in full
};

struct OpenedFile {
    std::string plugin;
    std::unique_ptr<ck::Reader> reader;
    ck::ModelHeader header;
};

// Finds the reader whose probe accepts the file and opens it (all validation included). When
// the reader fails, `read_before_failure` (if given) receives what it read before the problem.
OpenedFile open_with_any_reader(PluginRegistry& registry, const std::filesystem::path& file,
                                ck::Context& context,
                                ck::ModelHeader* read_before_failure = nullptr);

// The reader's facts for --json: each key in snake_case ("data start" -> data_start), each value
// a number when it is a decimal integer, else a string (docs/json.md).
nlohmann::json facts_json(const ck::ModelHeader& header);

int run_inspect(PluginRegistry& registry, const InspectSettings& settings, std::ostream& out,
                std::ostream& err);
// Exit 0 when sound. With `data`, every tensor's values are checked too (ck/kernels/validate.hpp);
// bad values are reported per tensor (stderr, or --json's "problems") with exit 1.
int run_verify(PluginRegistry& registry, const std::filesystem::path& file, bool json, bool data,
               std::ostream& out, std::ostream& err);

}  // namespace ckhost
