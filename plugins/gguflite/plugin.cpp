// The gguflite plugin: GGUF-lite (spec/gguf-lite.md), a small language-neutral export format,
// as a reader and a writer. The writer dequantizes any ggml source with the kernel table this
// CPU runs best (chosen once, when the plugin is loaded).
#include <exception>
#include <memory>
#include <new>

#include "ck/error.hpp"
#include "ck/plugin.hpp"
#include "gguflite_reader.hpp"
#include "gguflite_writer.hpp"

namespace {

using namespace ckplugin::gguflite;

// Only ck::Error may leave plugin code: anything else (std::bad_alloc, a filesystem error) is
// turned into one here, at the boundary.
template <class Fn>
auto guarded(Fn&& fn) -> decltype(fn()) {
    try {
        return fn();
    } catch (const ck::Error&) {
        throw;
    } catch (const std::bad_alloc&) {
        throw ck::Error("gguflite: out of memory");
    } catch (const std::exception& e) {
        throw ck::Error(std::string("gguflite: ") + e.what());
    }
}

class GuardedReader final : public ck::Reader {
  public:
    explicit GuardedReader(ck::Context& context) : inner_(context) {}
    ck::ModelHeader open(const std::filesystem::path& path) override {
        return guarded([&] { return inner_.open(path); });
    }
    ck::TensorView tensor(std::size_t index) override {
        return guarded([&] { return inner_.tensor(index); });
    }
    void verify() override {
        guarded([&] { inner_.verify(); });
    }

  private:
    GgufLiteReader inner_;
};

class GuardedWriter final : public ck::Writer {
  public:
    GuardedWriter(const ck::Options& options, ck::Context& context)
        : inner_(guarded([&] {
              return std::make_unique<GgufLiteWriter>(options, context,
                                                      ck::kernels::plugin_dequant_table());
          })) {}
    void prepare(const ck::ModelHeader& header, const std::filesystem::path& destination) override {
        guarded([&] { inner_->prepare(header, destination); });
    }
    std::vector<std::filesystem::path> outputs() const override {
        return guarded([&] { return inner_->outputs(); });
    }
    void begin(ck::OutputSink& out) override {
        guarded([&] { inner_->begin(out); });
    }
    void write(std::size_t index, const ck::TensorView& tensor) override {
        guarded([&] { inner_->write(index, tensor); });
    }
    void finish() override {
        guarded([&] { inner_->finish(); });
    }

  private:
    std::unique_ptr<GgufLiteWriter> inner_;
};

bool probe(const unsigned char* head, std::size_t size, const char*) {
    return looks_like_gguflite(head, size);
}

ck::Reader* create_reader(const ck::Options&, ck::Context& context) {
    return new GuardedReader(context);
}

ck::Writer* create_writer(const ck::Options& options, ck::Context& context) {
    return new GuardedWriter(options, context);
}

const ck_option_descriptor options[] = {
    {"scheme", CK_STAGE_WRITER, "q4", "q8|q4|f16|f32",
     "dtype of 2-D tensors: Q8_per_channel, Q4_per_group_64, F16 or F32"},
    {"schemes", CK_STAGE_WRITER, nullptr, nullptr,
     "JSON file mapping tensor names or globs to q8|q4|f16|f32 (overrides scheme)"},
    {"keep", CK_STAGE_WRITER, "f32", "f32|f16",
     "dtype of tensors that cannot take their scheme (1-D, inner dim not a multiple of 64 "
     "for q4)"},
    {"report", CK_STAGE_WRITER, "0", nullptr,
     "round-trip check: read the written file back, compare every tensor with the source and "
     "the fake quantization, print the error and size tables on stderr"},
};

const ck_plugin_descriptor descriptor = {
    CK_PLUGIN_DESCRIPTOR_HEAD(0),  // flags 0: not declared safe for concurrent calls
    CK_STAGE_READER | CK_STAGE_WRITER,
    "gguflite",
    "1.0.0",
    "GGUF-lite (GLFT): flat little-endian export with text metadata and F32/F16/Q8/Q4 "
    "tensors; the writer quantizes any dequantizable ggml source",
    options,
    sizeof options / sizeof options[0],
    probe,
    create_reader,
    nullptr,
    create_writer,
    ck::kernels::plugin_dequant_variant,
};

}  // namespace

CK_PLUGIN_EXPORT const ck_plugin_descriptor* ckhost_plugin_descriptor() {
    ck::kernels::plugin_dequant_table();  // choose the kernel variant when loaded
    return &descriptor;
}
