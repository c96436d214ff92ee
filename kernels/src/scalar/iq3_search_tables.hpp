// The search tables of the IQ3 quantizers, as ggml's iq3xs_init_impl builds them: the grid
// machinery of iq_search_tables.hpp for points of 4 elements with 3-bit levels (level l stands
// for the value (2l + 1) * scale), derived from the dequant grids of iq_grids.hpp.
#pragma once

#include "iq_search_tables.hpp"

namespace ck::kernels::scalar {

using Iq3SearchTable = GridSearchTable<4, 3>;

// Built on first use (thread-safe), then shared.
const Iq3SearchTable& iq3xxs_search_table();  // 256 points, 2 neighbour distances
const Iq3SearchTable& iq3s_search_table();    // 512 points, 3 neighbour distances

}  // namespace ck::kernels::scalar
