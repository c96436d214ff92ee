// What the GGUF-lite writer does with each tensor: the dtype it gets (the scheme, or the
// spec's fallback and why), its dims in PyTorch order, and where its bytes go. Decided in
// prepare(), from the header alone.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ck/context.hpp"
#include "ck/glob.hpp"
#include "ck/model.hpp"
#include "ck/options.hpp"
#include "gguflite_format.hpp"

namespace ckplugin::gguflite {
using namespace ck;

// The writer options scheme=, keep= and schemes=FILE.
class SchemeRules {
  public:
    // Throws a usage error (exit 2) for an unreadable or malformed schemes file.
    explicit SchemeRules(const Options& options);

    // The scheme asked for `name`: an exact name in the schemes file, else its first glob that
    // matches (file order), else scheme=. Marks the rule used.
    Dtype scheme_for(const std::string& name);
    Dtype default_scheme() const noexcept { return scheme_; }
    Dtype keep() const noexcept { return keep_; }
    // Rules of the schemes file that matched none of `header`'s tensors (likely typos), each
    // with the closest tensor names.
    std::vector<std::string> unused_rules(const ModelHeader& header) const;

  private:
    struct Rule {
        std::string pattern;
        Glob glob;  // the pattern as a shell glob: the same syntax as only=/skip=
        Dtype scheme;
        bool used = false;
    };
    Dtype scheme_ = Dtype::q4;
    Dtype keep_ = Dtype::f32;
    std::string file_;
    std::vector<Rule> rules_;
};

// How the source values reach the file.
enum class Source {
    copy,         // F32 -> F32, F16 -> F16: the bytes as they are
    dequantize,   // any type with a ggml dequantizer (F32, F16, BF16, the quantized types)
    convert_int,  // I8..I64 and F64: converted to F32 (not weights; exact when they fit)
};

struct TensorPlan {
    std::string name;
    std::uint32_t source_type = 0;  // ggml type id
    std::uint64_t source_bytes = 0;
    std::uint64_t row_length = 1;  // source elements per row (ggml ne[0])
    Source source = Source::dequantize;
    Dtype wanted = Dtype::f32;  // what the scheme asked for
    Dtype dtype = Dtype::f32;   // what is stored
    std::string fallback;       // why dtype != wanted; empty when it is not
    std::vector<std::uint32_t> dims;
    std::uint64_t elements = 0;
    std::uint64_t offset = 0;  // from the start of the data section
    std::uint64_t bytes = 0;
};

// Plans every tensor of `header`; throws ck::Error naming the tensor for what GGUF-lite cannot
// store (zero-size or too large dims, more than 8 dims, names that are not UTF-8 or longer
// than 65535 bytes, duplicates) and for types without a dequantizer.
std::vector<TensorPlan> plan_tensors(const ModelHeader& header, SchemeRules& rules);

}  // namespace ckplugin::gguflite
