// Matching `ckhost inspect`'s text in tests: its tables pad their columns to the widest cell,
// so a test that names a row's cells compares after squeezing every run of two or more spaces
// to exactly two ("  layer.1.wv  q6_K  [256, 128]  32,768  26880  1185444").
#pragma once

#include <string>

namespace cktest {

inline std::string squeezed(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    std::size_t spaces = 0;
    for (char c : text) {
        if (c == ' ') {
            ++spaces;
            continue;
        }
        if (spaces > 0) out.append(spaces >= 2 ? 2 : 1, ' ');
        spaces = 0;
        out += c;
    }
    out.append(spaces >= 2 ? 2 : spaces, ' ');
    return out;
}

}  // namespace cktest
