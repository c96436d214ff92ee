// The search tables of the grid quantizers (IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M), as ggml's
// iq2xs_init_impl builds them, derived here from the dequantization grids of iq_grids.hpp:
//  - the grid: per point, per element the position 2 * level + 1 (level = the element's index
//    in the grid's ladder of magnitudes), which is what ggml's searches measure distances in;
//  - the map from a key (element levels packed `Bits` bits each, element 0 lowest) to the grid
//    point with exactly those levels;
//  - for a key off the grid, its neighbours: every grid point whose squared distance to the
//    key's positions is among the `nwant` smallest distances that occur, nearest first and,
//    at equal distance, in grid order (ggml sorts (distance, index) pairs).
//
// GridSearchTable is generic over the point's element count and bits per level, so the 3-bit
// grids of IQ3_XXS / IQ3_S (iq3xs_init_impl: 4 elements, 3 bits) can be built the same way.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ck::kernels::scalar {

// A search table's arrays, for the SIMD searches (quantize_grid_lanes.inc), which call nothing
// inline of GridSearchTable (see simd_width.hpp). map[key] is the key's grid index, or
// -(1 + start) for a key with a neighbour list: neighbours[start] is the list's length, the
// grid indices follow, and neighbour_keys[start + 1 + j] is the key (the levels) of neighbour
// j. After the last list come grid_list_padding more keys, so a search may read whole
// registers of keys past the end of a list.
struct GridSearchArrays {
    const std::int32_t* map;
    const std::uint16_t* neighbours;
    const std::uint16_t* neighbour_keys;
};
inline constexpr std::size_t grid_list_padding = 32;

template <std::size_t Elements, unsigned Bits>
class GridSearchTable {
  public:
    // Per element, the position 2 * level + 1.
    using Point = std::array<std::int8_t, Elements>;

    // `levels[i]` holds the level of each element of grid point i. Neighbour lists are built
    // for every key whose levels are all below `queried_levels` (the quantizers clamp their
    // codes, so no other key is ever looked up; ggml builds lists for the others too, which
    // would change nothing but the time taken).
    GridSearchTable(const std::vector<std::array<std::uint8_t, Elements>>& levels,
                    unsigned queried_levels, int nwant);

    const Point& point(int index) const { return points_[static_cast<std::size_t>(index)]; }

    // The grid point with exactly the levels packed in `key`, or -1 when there is none.
    int index_of(unsigned key) const { return map_[key] >= 0 ? map_[key] : -1; }

    // The neighbours of a key that index_of() finds off the grid, in ggml's order.
    std::span<const std::uint16_t> neighbours_of(unsigned key) const;

    GridSearchArrays arrays() const;

  private:
    void add_neighbours(unsigned key, int nwant, const std::vector<std::uint16_t>& point_keys);

    std::vector<Point> points_;
    // Per key: the grid index (>= 0), or -(1 + start of the key's list in neighbours_), as in
    // ggml's kmap; a list is its length followed by the grid indices.
    std::vector<std::int32_t> map_;
    std::vector<std::uint16_t> neighbours_;
    std::vector<std::uint16_t> neighbour_keys_;  // beside neighbours_ (GridSearchArrays)
};

using Iq2SearchTable = GridSearchTable<8, 2>;

// Built on first use (thread-safe), then shared.
const Iq2SearchTable& iq2xxs_search_table();  // 256 points, 2 neighbour distances
const Iq2SearchTable& iq2xs_search_table();   // 512 points, 2 neighbour distances
const Iq2SearchTable& iq2s_search_table();    // 1024 points, 1 neighbour distance
const Iq2SearchTable& iq1s_search_table();    // 2048 points, 3 neighbour distances (IQ1_S, IQ1_M)

}  // namespace ck::kernels::scalar
