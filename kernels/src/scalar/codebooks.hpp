// Code books shared by several scalar kernels.
#pragma once

namespace ck::kernels::scalar {

// kvalues_iq4nl of ggml: the non-linear 4-bit code book of IQ4_NL and IQ4_XS. Stored as floats
// (each converts exactly) so the kernels need no int-to-float conversion per element.
inline constexpr float iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                           1,    13,   25,  38,  53,  69,  89,  113};

}  // namespace ck::kernels::scalar
