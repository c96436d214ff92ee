// What a finished conversion tells the user on stderr
// (docs/decisions/0048-a-summary-after-success.md): each output with its size, the bits per weight
// when the output holds quantized tensors, and the time taken, from the report --json prints, so
// the two never disagree.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ckhost {

// The summary's lines, without a trailing newline, for a conversion that wrote its outputs
// (not for --dry-run or an up-to-date --update): "ckhost: wrote PATH: N bytes (1.3 MiB)" per
// output, then "ckhost: done in 0.41 s" and, when a written tensor is quantized, ", 19.53 M
// parameters at 4.89 bits per weight" (the written tensors' bits over their elements).
std::vector<std::string> success_summary(const nlohmann::json& report);

}  // namespace ckhost
