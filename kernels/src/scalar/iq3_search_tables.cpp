// The IQ3 search tables (iq3_search_tables.hpp) from the dequant grids.
#include "iq3_search_tables.hpp"

#include <algorithm>

#include "iq_grids.hpp"

namespace ck::kernels::scalar {
namespace {

// A dequant grid entry holds its 4 magnitudes as bytes (IQ3_XXS: 4, 12, ..., 62; IQ3_S:
// 1, 3, ..., 15); each grid uses 8 distinct magnitudes, and a magnitude's level is its rank
// among them, which recovers ggml's kgrid_256 / kgrid_512 codes.
std::vector<std::array<std::uint8_t, 4>> iq3_grid_levels(std::span<const std::uint32_t> grid) {
    std::vector<std::uint8_t> ladder;
    for (const std::uint32_t entry : grid)
        for (int k = 0; k < 4; ++k) ladder.push_back(static_cast<std::uint8_t>(entry >> (8 * k)));
    std::sort(ladder.begin(), ladder.end());
    ladder.erase(std::unique(ladder.begin(), ladder.end()), ladder.end());
    std::vector<std::array<std::uint8_t, 4>> levels(grid.size());
    for (std::size_t i = 0; i < grid.size(); ++i) {
        for (std::size_t k = 0; k < 4; ++k) {
            const auto magnitude = static_cast<std::uint8_t>(grid[i] >> (8 * k));
            const auto rank = std::lower_bound(ladder.begin(), ladder.end(), magnitude);
            levels[i][k] = static_cast<std::uint8_t>(rank - ladder.begin());
        }
    }
    return levels;
}

// The quantizers clamp their levels to 0..7: every key may be looked up.
constexpr unsigned iq3_queried_levels = 8;

}  // namespace

const Iq3SearchTable& iq3xxs_search_table() {
    static const Iq3SearchTable table(iq3_grid_levels(iq3xxs_grid), iq3_queried_levels, 2);
    return table;
}

const Iq3SearchTable& iq3s_search_table() {
    static const Iq3SearchTable table(iq3_grid_levels(iq3s_grid), iq3_queried_levels, 3);
    return table;
}

}  // namespace ck::kernels::scalar
