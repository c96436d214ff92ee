// The grid quantizers' search tables (see iq_search_tables.hpp), built from the dequantization
// grids: a grid entry's bytes are the magnitudes of its 8 elements, and an element's level is
// the rank of its magnitude among the grid's distinct magnitudes. That recovers ggml's kgrid_*
// codes, whose levels 0, 1, 2 dequantize to increasing magnitudes.
#include "iq_search_tables.hpp"

#include <algorithm>
#include <set>

#include "iq_grids.hpp"

namespace ck::kernels::scalar {

template <std::size_t Elements, unsigned Bits>
GridSearchTable<Elements, Bits>::GridSearchTable(
    const std::vector<std::array<std::uint8_t, Elements>>& levels, unsigned queried_levels,
    int nwant)
    : map_(std::size_t{1} << (Bits * Elements), -1) {
    static_assert(Bits * Elements <= 16, "keys are stored as 16 bits");
    points_.reserve(levels.size());
    std::vector<std::uint16_t> point_keys;
    for (std::size_t i = 0; i < levels.size(); ++i) {
        Point point{};
        unsigned key = 0;
        for (std::size_t k = 0; k < Elements; ++k) {
            point[k] = static_cast<std::int8_t>(2 * levels[i][k] + 1);
            key |= unsigned{levels[i][k]} << (Bits * k);
        }
        points_.push_back(point);
        point_keys.push_back(static_cast<std::uint16_t>(key));
        map_[key] = static_cast<std::int32_t>(i);
    }
    const unsigned level_mask = (1u << Bits) - 1;
    for (unsigned key = 0; key < map_.size(); ++key) {
        bool queried = map_[key] < 0;
        for (std::size_t k = 0; k < Elements; ++k)
            queried = queried && ((key >> (Bits * k)) & level_mask) < queried_levels;
        if (queried) add_neighbours(key, nwant, point_keys);
    }
    neighbour_keys_.resize(neighbour_keys_.size() + grid_list_padding, 0);
}

template <std::size_t Elements, unsigned Bits>
void GridSearchTable<Elements, Bits>::add_neighbours(unsigned key, int nwant,
                                                     const std::vector<std::uint16_t>& point_keys) {
    // Distances are small integers: count how many points lie at each, then take the nwant
    // smallest distances that occur, each one's points in grid order.
    constexpr int widest_gap = 2 * ((1 << Bits) - 1);
    constexpr std::size_t largest_distance = Elements * widest_gap * widest_gap;
    std::vector<int> distance(points_.size());
    std::vector<int> points_at(largest_distance + 1, 0);
    for (std::size_t j = 0; j < points_.size(); ++j) {
        int d2 = 0;
        for (std::size_t k = 0; k < Elements; ++k) {
            const int position =
                static_cast<int>(2 * ((key >> (Bits * k)) & ((1u << Bits) - 1)) + 1);
            const int gap = points_[j][k] - position;
            d2 += gap * gap;
        }
        distance[j] = d2;
        ++points_at[static_cast<std::size_t>(d2)];
    }
    const std::size_t start = neighbours_.size();
    map_[key] = -static_cast<std::int32_t>(start + 1);
    neighbours_.push_back(0);
    int distances_taken = 0;
    for (std::size_t d2 = 0; d2 <= largest_distance && distances_taken < nwant; ++d2) {
        if (points_at[d2] == 0) continue;
        ++distances_taken;
        for (std::size_t j = 0; j < points_.size(); ++j)
            if (distance[j] == static_cast<int>(d2))
                neighbours_.push_back(static_cast<std::uint16_t>(j));
    }
    neighbours_[start] = static_cast<std::uint16_t>(neighbours_.size() - start - 1);
    neighbour_keys_.push_back(neighbours_[start]);
    for (std::size_t j = start + 1; j < neighbours_.size(); ++j)
        neighbour_keys_.push_back(point_keys[neighbours_[j]]);
}

template <std::size_t Elements, unsigned Bits>
std::span<const std::uint16_t> GridSearchTable<Elements, Bits>::neighbours_of(unsigned key) const {
    const auto start = static_cast<std::size_t>(-(map_[key] + 1));
    return {neighbours_.data() + start + 1, neighbours_[start]};
}

template <std::size_t Elements, unsigned Bits>
GridSearchArrays GridSearchTable<Elements, Bits>::arrays() const {
    return {map_.data(), neighbours_.data(), neighbour_keys_.data()};
}

template class GridSearchTable<8, 2>;
template class GridSearchTable<4, 3>;  // IQ3_XXS, IQ3_S (iq3_search_tables.cpp)

namespace {

// The levels of every point of an 8-element grid whose bytes read as magnitudes through
// `value_of` (unsigned for the IQ2 grids, signed -1 / 0 / +1 for IQ1S).
template <class ValueOf>
std::vector<std::array<std::uint8_t, 8>> grid_levels(std::span<const std::uint64_t> grid,
                                                     ValueOf value_of) {
    std::set<int> ladder;
    for (const std::uint64_t entry : grid)
        for (int k = 0; k < 8; ++k)
            ladder.insert(value_of(static_cast<std::uint8_t>(entry >> (8 * k))));
    std::vector<std::array<std::uint8_t, 8>> levels(grid.size());
    for (std::size_t i = 0; i < grid.size(); ++i) {
        for (int k = 0; k < 8; ++k) {
            const int value = value_of(static_cast<std::uint8_t>(grid[i] >> (8 * k)));
            const auto rank = std::distance(ladder.begin(), ladder.find(value));
            levels[i][static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(rank);
        }
    }
    return levels;
}

int unsigned_byte(std::uint8_t b) {
    return b;
}

int signed_byte(std::uint8_t b) {
    return static_cast<std::int8_t>(b);
}

// Every quantizer clamps its levels to 0..2 before looking a key up.
constexpr unsigned iq2_queried_levels = 3;

}  // namespace

const Iq2SearchTable& iq2xxs_search_table() {
    static const Iq2SearchTable table(grid_levels(iq2xxs_grid, unsigned_byte), iq2_queried_levels,
                                      2);
    return table;
}

const Iq2SearchTable& iq2xs_search_table() {
    static const Iq2SearchTable table(grid_levels(iq2xs_grid, unsigned_byte), iq2_queried_levels,
                                      2);
    return table;
}

const Iq2SearchTable& iq2s_search_table() {
    static const Iq2SearchTable table(grid_levels(iq2s_grid, unsigned_byte), iq2_queried_levels, 1);
    return table;
}

const Iq2SearchTable& iq1s_search_table() {
    static const Iq2SearchTable table(grid_levels(iq1s_grid, signed_byte), iq2_queried_levels, 3);
    return table;
}

}  // namespace ck::kernels::scalar
