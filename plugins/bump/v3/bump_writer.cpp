#include "bump_writer.hpp"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "ck/llama/llama_keys.hpp"
#include "ck/support/destination.hpp"
#include "ck/support/tensor_io.hpp"
#include "config_json.hpp"
#include "float_widen.hpp"
#include "hashed_payload.hpp"

namespace fs = std::filesystem;

namespace ckplugin::bump {
using namespace ck;
BumpWriter::BumpWriter(const Options& options, Context& context)
    : context_(context),
      context_length_(context_option(options)),
      strict_(options.get_bool("strict", false)),
      context_ok_(options.get_bool("context_ok", false)) {
    if (options.has("config")) {
        if (options.get("config").empty())
            throw usage_error("option config: expected a path, e.g. bump[config=out/config.json]");
        config_override_ = fs::path(options.get("config"));
    }
}

void BumpWriter::prepare(const ModelHeader& header, const fs::path& destination) {
    header_ = header;
    // First: no other change to the model gets past this.
    refuse_rope_scaling(header_, "bump v3");
    try {
        plan_ = plan_model(header_, PlanOptions{context_length_});
    } catch (const Error& e) {
        // The tensor or key named is the input's: say which file it is in.
        if (e.file().empty() && !header_.source.empty()) throw e.with_file(header_.source);
        throw;
    }

    check_position_embeddings();

    // `-o DIR/`, an existing directory or a new path without .bump: DIR/weights.bump;
    // otherwise (name.bump, an existing file) the path as given.
    bool new_directory = false;
    bump_path_ = bump_file_path(destination, new_directory);
    config_path_ =
        config_override_ ? *config_override_ : bump_path_.parent_path() / config_file_name;
    if (config_path_.lexically_normal() == bump_path_.lexically_normal())
        throw usage_error("config.json and the bump file would be the same file: " +
                          bump_path_.string());
    if (new_directory)
        context_.note("bump: -o " + destination.string() +
                      " does not exist and has no .bump extension: it is taken as a new "
                      "directory, holding " +
                      bump_path_.string() + " and " + config_path_.string());

    if (plan_.output_weight == OutputWeight::untied) {
        if (strict_)
            throw tensor_error(
                "untied output.weight cannot be stored in bump v3 (" + plan_.untied_reason +
                    "; the runtime ties the LM head to token_emb); refused because of "
                    "strict=1",
                output_weight_name, header_.source);
        report_untied(plan_.untied_reason);
    }
    warn_unwritten(context_, plan_.dropped, "bump v3");

    conventions::report_output_bytes(context_, bump_path_, plan_.file_bytes);
    conventions::report_output_bytes(context_, config_path_,
                                     render_config_json(plan_.config).size());

    table_bytes_ = dtype_table_bytes(plan_.dtype_table);
}

// bump v3 stores a learned position embedding slot of context x embed f32 that llama-family
// models do not have: it is all zeros, and with a large context it can dwarf the model
// (context=1000000 on the 1.3 MB sample: 1 GB of zeros). The plan says how large it is, and an
// override that makes it larger than everything else is refused unless confirmed.
void BumpWriter::check_position_embeddings() {
    const auto pos = std::find_if(plan_.slots.begin(), plan_.slots.end(),
                                  [](const Slot& s) { return s.role == SlotRole::pos_emb; });
    if (pos == plan_.slots.end()) return;
    const Geometry& g = plan_.geometry;
    const std::uint64_t rest = plan_.file_bytes - pos->bytes;
    const auto mib = [](std::uint64_t bytes) {
        return std::to_string(bytes) + " bytes (" +
               std::to_string((bytes * 10 + (1u << 19)) / (1u << 20) / 10) + "." +
               std::to_string((bytes * 10 + (1u << 19)) / (1u << 20) % 10) + " MiB)";
    };
    const std::string what = "position embeddings: context " + std::to_string(g.context) + " x " +
                             std::to_string(g.embed) + " f32 zeros = " + mib(pos->bytes);
    context_.note("bump: " + what + (context_length_ ? " (context=" : " (") +
                  (context_length_ ? std::to_string(*context_length_) + ")" : "the model's)"));
    context_.report("bump.position_embeddings", nlohmann::json{{"context", g.context},
                                                               {"embed", g.embed},
                                                               {"bytes", pos->bytes},
                                                               {"other_bytes", rest}}
                                                    .dump());
    if (context_length_ && pos->bytes > rest && !context_ok_)
        throw usage_error("bump[context=" + std::to_string(*context_length_) + "]: the " + what +
                          " would be more than the " + mib(rest) +
                          " of everything else in the file; give context_ok=1 to write them "
                          "anyway, or a smaller context");
}

std::vector<fs::path> BumpWriter::outputs() const {
    return {bump_path_, config_path_};
}

std::vector<std::size_t> BumpWriter::order() const {
    std::vector<std::size_t> order;
    // output.weight first when only its bytes can tell whether it is tied: the comparison
    // with token_embd then happens before any payload byte is written.
    if (plan_.output_weight == OutputWeight::compare_bytes)
        order.push_back(plan_.output_weight_index);
    for (const SlotFill& fill : plan_.fills)
        order.insert(order.end(), fill.tensors.begin(), fill.tensors.end());
    return order;
}

void BumpWriter::begin(OutputSink& out) {
    OutputFile& config = out.create(config_path_);
    std::string text = render_config_json(plan_.config);
    config.write(text.data(), text.size());

    payload_.start(out.create(bump_path_), header_bytes, table_bytes_);  // header: finish()
    slot_ = 0;
    piece_ = 0;
}

void BumpWriter::emit_zero_slots() {
    while (slot_ < plan_.slots.size() && plan_.fills[slot_].kind == SlotFill::Kind::zeros) {
        payload_.emit_zeros(plan_.slots[slot_].bytes);
        ++slot_;
    }
}

void BumpWriter::write(std::size_t index, const TensorView& tensor) {
    if (!payload_.started()) throw Error("bump writer: write() before begin()");
    const TensorInfo& t = header_.tensors.at(index);
    const std::string subject = llama::tensor_subject(t.name);
    support::check_tensor_bytes(tensor, t.nbytes, t.name);
    if (plan_.output_weight == OutputWeight::compare_bytes && index == plan_.output_weight_index &&
        !output_weight_digest_) {
        output_weight_digest_ = sha256(tensor.bytes());
        return;
    }

    WaitForHasher wait(payload_);
    emit_zero_slots();
    if (slot_ == plan_.slots.size() || plan_.fills[slot_].tensors.at(piece_) != index)
        throw Error("tensors must arrive in the writer's order (expected slot " +
                        (slot_ < plan_.slots.size() ? plan_.slots[slot_].name : "none") + ")",
                    {}, {}, subject);
    if (index == plan_.token_embd && plan_.output_weight == OutputWeight::compare_bytes)
        check_tied_output(tensor);

    const SlotFill& fill = plan_.fills[slot_];
    if (fill.kind == SlotFill::Kind::widen_to_f32) {
        std::vector<std::byte> widened = widen_to_f32(tensor.bytes(), t.type);
        payload_.emit(widened);
        payload_.wait();  // `widened` dies here
    } else {
        // Chunk by chunk: hash and write a chunk in parallel, then let its input pages go, so a
        // large mapped tensor (token_embd) never becomes resident as a whole.
        constexpr std::size_t chunk = 4u << 20;
        for (std::size_t done = 0; done < tensor.bytes().size(); done += chunk) {
            const std::size_t end = std::min(tensor.bytes().size(), done + chunk);
            payload_.emit(tensor.bytes().subspan(done, end - done));
            payload_.wait();
            tensor.release(done, end);
        }
    }
    if (++piece_ == fill.tensors.size()) {
        ++slot_;
        piece_ = 0;
    }
}

void BumpWriter::check_tied_output(const TensorView& token_embd) {
    if (!output_weight_digest_)
        throw tensor_error("output.weight was not seen before token_embd.weight",
                           output_weight_name);
    if (sha256(token_embd.bytes()) == *output_weight_digest_) return;  // tied: nothing lost
    std::string reason =
        "output.weight has the type and shape of token_embd.weight but "
        "different bytes";
    if (strict_)
        throw tensor_error("untied output.weight cannot be stored in bump v3 (" + reason +
                               "; the runtime ties the LM head to token_emb); refused because of "
                               "strict=1",
                           output_weight_name, header_.source);
    report_untied(reason);
}

void BumpWriter::report_untied(const std::string& reason) {
    context_.warn("bump: untied output.weight is dropped (" + reason +
                  "): bump v3 has no slot for it and the runtime uses token_emb as the LM head; "
                  "use bump[strict=1] to refuse instead");
    context_.report(
        "bump.untied_output_weight",
        nlohmann::json{{"tensor", output_weight_name}, {"dropped", true}, {"reason", reason}}
            .dump());
}

void BumpWriter::finish() {
    if (!payload_.started()) throw Error("bump writer: finish() before begin()");
    {
        WaitForHasher wait(payload_);
        emit_zero_slots();
    }
    if (slot_ != plan_.slots.size())
        throw Error("only " + std::to_string(slot_) + " of " + std::to_string(plan_.slots.size()) +
                    " slots were written (next: " + plan_.slots[slot_].name + ")");
    if (payload_.file().size() != plan_.file_bytes)
        throw Error("wrote " + std::to_string(payload_.file().size()) + " bytes, planned " +
                        std::to_string(plan_.file_bytes),
                    bump_path_.string());

    const Geometry& g = plan_.geometry;
    Header h;
    h.num_layers = g.layers;
    h.vocab_size = g.vocab;
    h.embed_dim = g.embed;
    h.context_len = g.context;
    h.num_heads = g.heads;
    h.head_dim = g.head_dim;
    h.aligned_embed_dim = g.embed;  // the reference does not align it
    h.aligned_head_dim = g.aligned_head_dim;
    h.aligned_context = align_up(g.context, context_alignment);
    h.checksum = payload_.digest();
    auto bytes = encode_header(h);
    payload_.file().write_at(0, bytes);
}

}  // namespace ckplugin::bump
