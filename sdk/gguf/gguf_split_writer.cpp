#include "gguf_split_writer.hpp"

#include "ck/error.hpp"
#include "ck/plugin.hpp"
#include "ck/support/destination.hpp"
#include "ck/support/json_string.hpp"
#include "gguf_writer.hpp"

namespace fs = std::filesystem;

namespace ckplugin::gguf {
using namespace ck;

void GgufSplitWriter::prepare(const ModelHeader& header, const fs::path& destination) {
    // Every check a single file gets, on the whole model: a name in two shards is a duplicate.
    const ModelHeader model = storable_header(header);
    const std::vector<ShardRange> ranges = plan_shards(model.tensors, settings_);
    // A set is several files: a new -o PATH without .gguf is a directory for them (as for bump),
    // not a prefix whose shards would land beside PATH.
    const bool new_directory = support::is_new_directory_destination(destination, ".gguf");
    const fs::path prefix = split_prefix(
        new_directory ? fs::path(destination.native() + "/") : destination, header.source);
    if (!new_directory) refuse_other_sets(prefix, ranges.size());

    shards_.clear();
    std::string counts, report;
    for (std::size_t k = 0; k < ranges.size(); ++k) {
        ModelHeader part;
        part.source = model.source;
        // Shard headers are final: storable_header already added to the model (shard 1) what
        // ckhost adds, and shards 2..N must carry the three split keys alone.
        part.format = "gguf";
        part.metadata = shard_metadata(model.metadata, k, ranges.size(), model.tensors.size(),
                                       settings_.layout);
        for (std::size_t i = ranges[k].begin; i < ranges[k].end; ++i) {
            TensorInfo t = model.tensors[i];
            t.ne = ggml_written_shape(std::move(t.ne));
            part.tensors.push_back(std::move(t));
        }
        // Built like the plugin's own writer, so every writer option applies to each shard.
        std::unique_ptr<Writer> writer(construct_stage<GgufWriter>(options_, context_));
        writer->prepare(part, shard_path(prefix, k, ranges.size()));
        shards_.push_back({ranges[k], writer->outputs().at(0), std::move(writer)});

        const std::string n = std::to_string(ranges[k].end - ranges[k].begin);
        counts += (k == 0 ? "" : k + 1 == ranges.size() ? " and " : ", ") + n;
        report += std::string(k == 0 ? "" : ",") +
                  "{\"path\":" + support::json_string(shards_.back().path.string()) +
                  ",\"tensors\":" + n + "}";
    }
    if (new_directory)
        context_.note("gguf: -o " + destination.string() +
                      " does not exist and has no .gguf extension: it is taken as a new "
                      "directory for the split set (for shards named " +
                      destination.string() + "-00001-of-... give -o " + destination.string() +
                      ".gguf)");
    context_.note("gguf: a split set of " + std::to_string(ranges.size()) +
                  (ranges.size() == 1 ? " file" : " files") + ", with " + counts +
                  " tensors: " + shards_.front().path.string() +
                  (ranges.size() > 1 ? " to " + shards_.back().path.string() : std::string()));
    context_.report("gguf.split", "{\"shards\":[" + report + "]}");
}

std::vector<fs::path> GgufSplitWriter::outputs() const {
    std::vector<fs::path> paths;
    for (const Shard& s : shards_) paths.push_back(s.path);
    return paths;
}

namespace {

// The host's sink as one shard's GgufWriter sees it: remembers the file the writer creates, so
// that the split writer can finish that file as soon as the shard is complete.
class RecordingSink final : public OutputSink {
  public:
    explicit RecordingSink(OutputSink& host) : host_(host) {}
    OutputFile& create(const fs::path& final_path) override {
        created = &host_.create(final_path);
        return *created;
    }
    OutputFile* created = nullptr;

  private:
    OutputSink& host_;
};

}  // namespace

void GgufSplitWriter::begin(OutputSink& out) {
    // Every shard file exists (as a temporary) from the start: a path that cannot be written
    // fails before any tensor is, and the set is committed, or removed, as a whole.
    for (Shard& s : shards_) {
        RecordingSink sink(out);
        s.writer->begin(sink);
        if (!sink.created) throw Error("the shard writer created no file", s.path.string());
        s.file = sink.created;
    }
    current_ = 0;
}

void GgufSplitWriter::complete(std::size_t k) {
    shards_[k].writer->finish();
    // Its buffer goes now: held until commit, N shards would cost N buffers of memory.
    shards_[k].file->finish();
}

void GgufSplitWriter::write(std::size_t index, const TensorView& tensor) {
    while (current_ < shards_.size() && index >= shards_[current_].range.end) complete(current_++);
    if (current_ == shards_.size() || index < shards_[current_].range.begin)
        throw plugin_bug("tensor " + std::to_string(index) + " arrived out of header order",
                         "gguf split writer");
    shards_[current_].writer->write(index - shards_[current_].range.begin, tensor);
}

void GgufSplitWriter::finish() {
    while (current_ < shards_.size()) complete(current_++);
}

Writer* create_gguf_writer(const Options& options, Context& context) {
    if (std::optional<SplitSettings> split = split_settings(options))
        return new GgufSplitWriter(*split, options, context);
    return writer_factory<GgufWriter>(options, context);
}

}  // namespace ckplugin::gguf
