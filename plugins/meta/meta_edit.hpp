// The meta transform: edits a model's metadata and renames its tensors while the tensor bytes
// pass through untouched. Options are parsed when the stage is created; everything that needs
// the model (keys present, tensors matched, set_file's file) is checked in plan(), so every
// error comes before any output exists. Within one stage the edits run in a fixed order: del,
// rename, set / set_file / special_token, rename_tensors; chain stages for another order.
#pragma once

#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "ck/stage.hpp"

namespace ckplugin::meta {
using namespace ck;

class Meta final : public Transform {
  public:
    Meta(const Options& options, Context& context);
    ModelHeader plan(const ModelHeader& in) override;
    // The tensor as the previous stage made it: a rename changes the directory, not the bytes.
    TensorView apply(std::size_t index, const Upstream& upstream) override {
        return upstream(index);
    }
    std::uint64_t row_granule(std::size_t index, const UpstreamGranule& upstream) const override {
        return upstream(index);
    }
    TensorView apply_rows(std::size_t index, RowRange rows, const UpstreamRows& upstream) override {
        return upstream(index, rows);
    }

  private:
    struct KeyValue {
        std::string option;  // which option gives it ("set", "set_file", "special_token")
        std::string key;
        Value value;
    };
    struct TensorRename {
        std::string text;  // the pattern as written, for messages
        std::regex pattern;
        std::string replacement;
    };
    struct SpecialToken {
        std::string key;  // tokenizer.ggml.<name>_token_id
        std::string text;
    };

    void delete_keys(Metadata& metadata, const std::string& file,
                     std::vector<std::string>& done) const;
    void rename_key(Metadata& metadata, const std::string& file,
                    std::vector<std::string>& done) const;
    Value token_id(const Metadata& metadata, const std::string& file) const;
    Value untyped_value(const Metadata& metadata, const std::string& arch) const;
    void rename_tensors(ModelHeader& header, std::vector<std::string>& done) const;

    Context& context_;
    std::string del_;
    std::optional<std::pair<std::string, std::string>> rename_;
    std::optional<KeyValue> set_;
    // set=KEY=VALUE without a type: the key's type is found in plan() (from llama.cpp's table
    // of key types, else the key's type in the input).
    std::optional<std::pair<std::string, std::string>> set_untyped_;
    std::optional<std::pair<std::string, std::filesystem::path>> set_file_;
    std::optional<SpecialToken> special_token_;
    std::optional<TensorRename> rename_tensors_;
};

}  // namespace ckplugin::meta
