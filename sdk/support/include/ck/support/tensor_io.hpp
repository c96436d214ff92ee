// What every stage does with a tensor's bytes: name it in errors, check its size, stream it to
// a file without keeping a mapped input resident.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ck/error.hpp"
#include "ck/model.hpp"
#include "ck/output.hpp"

namespace ck::support {

// The SDK's error factories (ck/error.hpp), by their old names here.
using ck::tensor_error;
using ck::tensor_subject;

// Throws unless `view` holds exactly `expected` bytes ("got N bytes[ of TYPE], expected M").
// `type` names the expected ggml type when the caller wants it in the message.
void check_tensor_bytes(const TensorView& view, std::uint64_t expected, std::string_view name,
                        std::string_view type = {}, std::string file = {});

// Appends the view's bytes to `file`. A mapped input's bytes are copied by the kernel
// (OutputFile::copy_from: copy_file_range, at `cp`'s speed, never mapped into the process);
// otherwise, or where the kernel cannot, in 4 MiB chunks, each mapped in one call before it is
// written (TensorView::prefault) and its input pages released once written: a multi-GB mapped
// tensor then keeps a few MiB resident, not the whole tensor.
void write_streaming(OutputFile& file, const TensorView& view);

}  // namespace ck::support
