// Where a rank sits in the channels of an SPMD function (module schema
// Channel): the ranks of a run form the grid in row-major order, and a
// channel groups the ranks that differ only along its axes, ordered by their
// row-major index over those axes (in the order the axes are listed).
// Pure functions; the shapes were checked by the module verifier.
#ifndef KILN_RUNTIME_SRC_COLLECTIVE_GRID_H_
#define KILN_RUNTIME_SRC_COLLECTIVE_GRID_H_

#include <cstdint>
#include <vector>

namespace kiln {
namespace collective {

// Rank |rank|'s sub-group: |color| numbers the sub-group (row-major index
// over the other axes), |key| is the rank's index inside it and |size| the
// sub-group's rank count. These are the color and key of
// kiln_hal_channel_split.
struct ChannelPlacement {
  int32_t color = 0;
  int32_t key = 0;
  int32_t size = 1;
};

// Product of |grid_shape| (the world size of the grid).
int64_t GridSize(const std::vector<int64_t>& grid_shape);

ChannelPlacement PlaceRank(const std::vector<int64_t>& grid_shape,
                           const std::vector<int16_t>& axes, int64_t rank);

// True when the channel is the whole world in rank order (color 0 and
// key == rank for every rank), so the world channel serves it unsplit.
bool SpansWorldInOrder(const std::vector<int64_t>& grid_shape,
                       const std::vector<int16_t>& axes);

}  // namespace collective
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_COLLECTIVE_GRID_H_
