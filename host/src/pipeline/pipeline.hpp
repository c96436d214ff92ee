// A conversion: one reader, transforms, one writer, planned completely before the first
// output byte and then streamed tensor by tensor.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ck/stage.hpp"
#include "pipeline/conversion.hpp"
#include "pipeline/pipeline_spec.hpp"
#include "pipeline/recipe.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost {

struct InputIdentity;     // pipeline/input_identity.hpp
class ConvertedAdapters;  // pipeline/peft_adapters.hpp

struct ConvertSettings : Conversion {
    // Where the input's bytes are when `input` is "-" (standard input): its spool file
    // (stdin_spool.hpp). Messages and the JSON report still call it standard input.
    std::optional<std::filesystem::path> input_file;
    // fsync each output before its rename and the directories after (--no-sync: false).
    bool sync = true;
    // Tells the user something as it happens (a stale temporary file removed); may be empty.
    std::function<void(const std::string&)> say;
    bool dry_run = false;
    bool force = false;
    // Skip when the outputs' recipe record (recipe.hpp) says this pipeline made them from this
    // input with this ckhost and these plugins, and they are unchanged since; otherwise write,
    // replacing them, and record the recipe. What `ckhost batch` asks of each job.
    bool update = false;
    bool progress = false;   // draw progress on stderr
    bool checksums = false;  // SHA-256 of every output in the report (costs one more read)
    // Bytes of tensors computed ahead of the writer, at most (--max-memory); one tensor (or
    // group) is always allowed, however large.
    std::uint64_t max_memory = 0;  // 0: default_max_memory()
};

struct ConvertResult {
    nlohmann::json report;  // what --json prints
    std::vector<std::string> warnings;
    std::vector<std::string> notes;
};

class Pipeline {
  public:
    // Resolves every stage and checks kinds and options: usage errors surface here.
    Pipeline(PluginRegistry& registry, const std::string& text);
    ~Pipeline();

    // Opens the input, plans every stage and prepares the writer; throws on any problem, a
    // stage's error without a file naming the input, as a ConversionError carrying a
    // suggested pipeline when one plans (suggest_pipeline).
    // `input_name`, when given, replaces the input's path as the header's source (what
    // writers name a directory destination's file after: "stdin" for standard input).
    void plan(const std::filesystem::path& input, const std::filesystem::path& output,
              const std::string& input_name = {});
    // After plan() failed with an input error (`refusal`, the error's message): the first of
    // the repairs the refusal names that plans on the same files, else "". A refusal names its
    // remedies as stages in backticks (bump: `quantize[mix=q4_k_m]`, `bump[version=4]`,
    // `dequant[to=f32]`): each is tried right before the writer, or, naming the writer's plugin,
    // as options of the writer. A refusal naming none that asks for dequant (gguf:dequant:
    // repack[to=nf4]:safetensors) gets a `dequant` stage after the reader. The user's reader
    // and stages are kept; plans only, nothing is written.
    std::string suggest_pipeline(const std::filesystem::path& input,
                                 const std::filesystem::path& output, const std::string& input_name,
                                 const std::string& refusal) const;
    // The size of each output as its writer states it (Context::state_output_size), in
    // outputs() order; empty when the writer did not state every one.
    std::vector<std::uint64_t> output_bytes() const;
    // Prints the plan (which tensor goes through which stage, dtype and bytes).
    void print_plan(std::ostream& out) const;
    // Streams every tensor through the stages into atomically committed output files, or to
    // standard output when the output is "-".
    ConvertResult run(const ConvertSettings& settings);

    // The writer's stage name, and whether it declares that it can write to standard output
    // (CK_PLUGIN_FLAG_STREAMS).
    const std::string& writer_name() const;
    bool writer_streams() const;

    const std::vector<std::filesystem::path>& outputs() const { return outputs_; }
    // What `--update` compares (recipe.hpp): this pipeline's stages with their options, each
    // stage's plugin version and file digest, ckhost's, and the identity of `input`.
    nlohmann::json recipe(const std::filesystem::path& input) const;
    // The files and folders a stage reads besides the input (lora's adapters, quantize's
    // imatrix, meta's set_file): every option value, or item of a {a,b} list, that names one,
    // with its identity, so that a changed adapter makes --update convert again.
    nlohmann::json side_inputs(const std::filesystem::path& input) const;
    const ck::RecordingContext& context() const { return context_; }

  private:
    struct Stage;
    struct Item;
    struct Step;
    // Results of a group computed for one tensor and not asked for yet, by (depth, index).
    using GroupMemo = std::map<std::pair<std::size_t, std::size_t>, ck::TensorView>;
    ck::TensorView fetch(std::size_t depth, std::size_t index, GroupMemo& memo,
                         std::vector<double>& seconds);
    ck::TensorView fetch_rows(std::size_t depth, std::size_t index, ck::RowRange rows,
                              std::vector<double>& seconds);
    // Rows a block of tensor `index` of stage `depth`'s header must be a multiple of; 0 when
    // some stage up to it needs the tensor whole.
    std::uint64_t row_granule(std::size_t depth, std::size_t index) const;
    // Why tensors cannot be computed ahead on several threads, or "" when they can.
    std::string sequential_reason() const;
    // Writes every tensor in the writer's order, computing ahead on the pool when allowed.
    nlohmann::json stream(const ConvertSettings& settings, ck::OutputSet& out);
    // The writer's order of the final header's tensors (its own, else header order).
    std::vector<std::size_t> writer_order();
    // The writer's work in order: items (tensors, row blocks, groups) and the writer's calls.
    void make_items(const std::vector<std::size_t>& order, std::uint64_t block_bytes,
                    std::vector<Item>& items, std::vector<Step>& steps) const;
    // Row blocks of final tensor `index` of about `block_bytes` each; empty when it goes whole.
    std::vector<ck::RowRange> row_blocks(std::size_t index, std::uint64_t block_bytes) const;
    void compute(Item& item);
    ConvertResult convert(const ConvertSettings& settings, ck::OutputSet& out);
    void check_target(const ck::OutputSet& out, const std::filesystem::path& target,
                      const InputIdentity& input, bool dry_run);
    nlohmann::json planned_report(const ConvertSettings& settings,
                                  const Freshness& freshness) const;
    void write_outputs(const ConvertSettings& settings, ck::OutputSet& out, nlohmann::json& report,
                       const nlohmann::json& recipe, const std::function<void()>& before_commit);
    void refuse_unknown_ckhost_keys(const std::filesystem::path& input) const;
    // plan() without the error's file and suggestion (what suggest_pipeline runs).
    void plan_stages(const std::filesystem::path& input, const std::filesystem::path& output,
                     const std::string& input_name);
    nlohmann::json plan_json() const;
    // When the reader could not open `input` (reader_choice.cpp): why, if ckhost refuses what it
    // holds (PyTorch pickles), else which reader's probe recognises it; and the pipeline with
    // that reader in the first place when it plans, else "". {"", ""} when nothing is known.
    std::pair<std::string, std::string> reader_hint(const std::filesystem::path& input,
                                                    const std::filesystem::path& output,
                                                    const std::string& input_name) const;
    // A lora stage naming PEFT adapter folders: the folders converted to GGUF adapters and the
    // stage created again with those (peft_adapters.hpp). `input` is the pipeline's input.
    void use_converted_adapters(Stage& stage, const std::filesystem::path& input);
    // A safetensors file of a Hugging Face checkpoint read alone: a warning naming the reader
    // of the whole checkpoint.
    void warn_if_part_of_a_checkpoint(const std::filesystem::path& input);

    PluginRegistry& registry_;
    ck::RecordingContext context_;
    std::string text_;  // the pipeline as given
    std::vector<std::unique_ptr<Stage>> stages_;
    std::vector<ck::ModelHeader> headers_;  // headers_[k]: what stage k produced
    std::vector<std::filesystem::path> outputs_;
    // Seconds spent inside each stage's calls, upstream calls included (fetch nests), for the
    // report's per-stage times.
    std::vector<double> inclusive_seconds_;
    std::mutex seconds_mutex_;
    std::unique_ptr<ConvertedAdapters> converted_adapters_;  // removed with the pipeline
    std::atomic<bool> stop_{false};  // a tensor failed or the run is over: workers stop early
};

}  // namespace ckhost
