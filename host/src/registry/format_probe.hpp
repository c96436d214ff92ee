// What an input is, asked of the reader plugins' probe functions (ck_plugin_descriptor::probe):
// `inspect` picks its reader by them, and a conversion whose reader cannot open its input says
// which reader can (docs/pipelines.md, "Which reader").
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "registry/plugin_registry.hpp"

namespace ckhost {

// The first bytes of an input as a probe is shown them, and the path it is shown: a folder that
// holds a config.json is shown as that file (a Hugging Face checkpoint is recognised by its
// config.json beside its weights), anything else as itself.
struct ProbeSample {
    std::filesystem::path path;
    unsigned char head[256] = {};
    std::size_t size = 0;
};
// The file a probe is shown for `input`: a folder's config.json when it has one, else `input`.
std::filesystem::path probed_file(const std::filesystem::path& input);
// Reads the sample of `input`; its `path` is empty when there is nothing to show a probe (no
// such file, a folder without config.json, no permission to read).
ProbeSample probe_sample(const std::filesystem::path& input);

// The readers whose probe accepts `sample`, in the registry's order (plugins that cannot be
// loaded are skipped).
std::vector<std::string> readers_recognising(PluginRegistry& registry, const ProbeSample& sample);

// A reader's format in a few words, from its summary: "a Hugging Face checkpoint folder".
std::string format_words(const PluginEntry& reader);

// Why no reader reads `input` when it holds weights ckhost refuses to read on purpose (PyTorch
// pickles: pytorch_model.bin, *.pt, *.pth, *.ckpt), naming the files and what to do; "" otherwise.
std::string refused_weights(const std::filesystem::path& input);

}  // namespace ckhost
