#include "bump_v3_writer.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "ck/support/tensor_io.hpp"
#include "config_json.hpp"
#include "float_widen.hpp"

namespace fs = std::filesystem;

namespace ckplugin::bump {
using namespace ck;

BumpV3Writer::BumpV3Writer(const Options& options, Context& context)
    : PayloadWriter(options, context, "bump v3", "bump["),
      strict_(options.get_bool("strict", false)),
      context_ok_(options.get_bool("context_ok", false)) {}

void BumpV3Writer::prepare(const ModelHeader& header, const fs::path& destination) {
    plan_input(header, [&] { plan_ = plan_model(header_, PlanOptions{context_length_}); });
    check_position_embeddings();

    const bool new_directory = place_outputs(destination);
    check_outputs(destination, new_directory, config_path_.string());
    if (plan_.output_weight == OutputWeight::untied) refuse_or_report_untied(plan_.untied_reason);
    warn_unwritten(plan_.dropped);

    context_.state_output_size(bump_path_, plan_.file_bytes);
    context_.state_output_size(config_path_, render_config_json(plan_.config).size());
    set_dtype_table(plan_.dtype_table);
}

// bump v3 stores a learned position embedding slot of context x embed f32 that llama-family
// models do not have: it is all zeros, and with a large context it can dwarf the model
// (context=1000000 on the 1.3 MB sample: 1 GB of zeros). The plan says how large it is, and an
// override that makes it larger than everything else is refused unless confirmed.
void BumpV3Writer::check_position_embeddings() {
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

std::vector<fs::path> BumpV3Writer::outputs() const {
    return {bump_path_, config_path_};
}

std::vector<std::size_t> BumpV3Writer::order() const {
    std::vector<std::size_t> order;
    // output.weight first when only its bytes can tell whether it is tied: the comparison
    // with token_embd then happens before any payload byte is written.
    if (plan_.output_weight == OutputWeight::compare_bytes)
        order.push_back(plan_.output_weight_index);
    for (const SlotFill& fill : plan_.fills)
        order.insert(order.end(), fill.tensors.begin(), fill.tensors.end());
    return order;
}

void BumpV3Writer::begin(OutputSink& out) {
    OutputFile& config = out.create(config_path_);
    std::string text = render_config_json(plan_.config);
    config.write(text.data(), text.size());

    start_payload(out);
    slot_ = 0;
    piece_ = 0;
}

void BumpV3Writer::emit_zero_slots() {
    while (slot_ < plan_.slots.size() && plan_.fills[slot_].kind == SlotFill::Kind::zeros) {
        payload_.emit_zeros(plan_.slots[slot_].bytes);
        ++slot_;
    }
}

void BumpV3Writer::write(std::size_t index, const TensorView& tensor) {
    expect_started("write");
    const TensorInfo& t = header_.tensors.at(index);
    support::check_tensor_bytes(tensor, t.nbytes, t.name);
    if (plan_.output_weight == OutputWeight::compare_bytes && index == plan_.output_weight_index &&
        !output_weight_digest_) {
        output_weight_digest_ = sha256(tensor.bytes());
        return;
    }

    WaitForHasher wait(payload_);
    emit_zero_slots();
    if (slot_ == plan_.slots.size() || plan_.fills[slot_].tensors.at(piece_) != index)
        refuse_order(t.name, "slot", slot_ < plan_.slots.size() ? plan_.slots[slot_].name : "none");
    if (index == plan_.token_embd && plan_.output_weight == OutputWeight::compare_bytes)
        check_tied_output(tensor);

    const SlotFill& fill = plan_.fills[slot_];
    if (fill.kind == SlotFill::Kind::widen_to_f32) {
        std::vector<std::byte> widened = widen_to_f32(tensor.bytes(), t.type);
        payload_.emit(widened);
        payload_.wait();  // `widened` dies here
    } else {
        payload_.emit_released(tensor, 0, tensor.bytes().size());
    }
    if (++piece_ == fill.tensors.size()) {
        ++slot_;
        piece_ = 0;
    }
}

void BumpV3Writer::check_tied_output(const TensorView& token_embd) {
    if (!output_weight_digest_)
        throw tensor_error("output.weight was not seen before token_embd.weight",
                           output_weight_name);
    if (sha256(token_embd.bytes()) == *output_weight_digest_) return;  // tied: nothing lost
    refuse_or_report_untied(
        "output.weight has the type and shape of token_embd.weight but different bytes");
}

// v3 has no slot for an untied output.weight: dropped with a warning, or refused with strict=1.
void BumpV3Writer::refuse_or_report_untied(const std::string& reason) {
    if (strict_)
        throw tensor_error("untied output.weight cannot be stored in bump v3 (" + reason +
                               "; the runtime ties the LM head to token_emb); refused because of "
                               "strict=1",
                           output_weight_name, header_.source);
    context_.warn("bump: untied output.weight is dropped (" + reason +
                  "): bump v3 has no slot for it and the runtime uses token_emb as the LM head; "
                  "use bump[strict=1] to refuse instead");
    context_.report(
        "bump.untied_output_weight",
        nlohmann::json{{"tensor", output_weight_name}, {"dropped", true}, {"reason", reason}}
            .dump());
}

void BumpV3Writer::finish() {
    expect_started("finish");
    {
        WaitForHasher wait(payload_);
        emit_zero_slots();
    }
    const Geometry& g = plan_.geometry;
    Header h;
    set_header_sizes(h, g);
    h.aligned_embed_dim = g.embed;  // the reference does not align it
    h.aligned_head_dim = g.aligned_head_dim;
    h.aligned_context = align_up(g.context, context_alignment);
    finish_payload(slot_, plan_.slots.size(),
                   slot_ < plan_.slots.size() ? plan_.slots[slot_].name : "", "slot",
                   plan_.file_bytes, [&](const Digest& digest) {
                       h.checksum = digest;
                       return encode_header(h);
                   });
}

}  // namespace ckplugin::bump
