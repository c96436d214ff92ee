// What the repack stage tells the user: which tensors it repacks (and, once done, how
// accurately), which it leaves alone and why. The JSON goes into the run's report under
// "repack"; skips a user may not expect also become warnings, one per reason.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "ck/kernels/repack.hpp"

namespace ckplugin::repack {
using namespace ck;

struct SkipReason {
    enum class Kind {
        not_selected,      // only=/skip= (silent)
        not_2d,            // norms, biases (silent)
        already_repacked,  // codes or scales of an earlier repack (silent)
        no_path,           // a type the target has no path from (warned)
        block_rule,        // the size does not fit the target's blocks (warned)
        name_taken,        // X.minmax / X.absmax exists already (warned)
    };
    Kind kind;
    std::string why;
};

class RepackReport {
  public:
    RepackReport(Context& context, std::string target, std::string kernels);

    // Returns the entry's index for done().
    std::size_t planned(std::string name, std::string from, std::uint64_t elements,
                        std::uint64_t bytes_in, std::uint64_t bytes_out);
    void skipped(std::string name, std::uint32_t type, SkipReason reason);
    // After planning: warnings for unexpected skips, and the report as far as it is known.
    void finish_plan();
    // A tensor is repacked; the report is complete once every planned tensor is.
    void done(std::size_t entry, const kernels::RepackError& error);

  private:
    struct Planned {
        std::string name, from;
        std::uint64_t elements = 0, bytes_in = 0, bytes_out = 0;
        bool done = false;
        kernels::RepackError error;
    };
    struct Skipped {
        std::string name;
        std::uint32_t type;
        SkipReason reason;
    };
    void publish() const;

    Context& context_;
    std::string target_, kernels_;
    std::vector<Planned> planned_;
    std::vector<Skipped> skipped_;
    std::size_t done_count_ = 0;
};

}  // namespace ckplugin::repack
