#include "collective/grid.h"

#include <algorithm>

namespace kiln {
namespace collective {

int64_t GridSize(const std::vector<int64_t>& grid_shape) {
  int64_t size = 1;
  for (int64_t extent : grid_shape) size *= extent;
  return size;
}

ChannelPlacement PlaceRank(const std::vector<int64_t>& grid_shape,
                           const std::vector<int16_t>& axes, int64_t rank) {
  // Row-major coordinates of the rank.
  std::vector<int64_t> coordinates(grid_shape.size());
  for (size_t d = grid_shape.size(); d-- > 0;) {
    coordinates[d] = rank % grid_shape[d];
    rank /= grid_shape[d];
  }
  ChannelPlacement placement;
  int64_t key = 0, size = 1;
  for (int16_t axis : axes) {
    key = key * grid_shape[size_t(axis)] + coordinates[size_t(axis)];
    size *= grid_shape[size_t(axis)];
  }
  int64_t color = 0;
  for (size_t d = 0; d < grid_shape.size(); ++d) {
    if (std::find(axes.begin(), axes.end(), int16_t(d)) != axes.end()) continue;
    color = color * grid_shape[d] + coordinates[d];
  }
  placement.color = int32_t(color);
  placement.key = int32_t(key);
  placement.size = int32_t(size);
  return placement;
}

bool SpansWorldInOrder(const std::vector<int64_t>& grid_shape,
                       const std::vector<int16_t>& axes) {
  // Axes of extent 1 change nothing; the others must all be channel axes,
  // listed in increasing order.
  int previous = -1;
  for (int16_t axis : axes) {
    if (grid_shape[size_t(axis)] == 1) continue;
    if (axis <= previous) return false;
    previous = axis;
  }
  for (size_t d = 0; d < grid_shape.size(); ++d) {
    if (grid_shape[d] != 1 &&
        std::find(axes.begin(), axes.end(), int16_t(d)) == axes.end()) {
      return false;
    }
  }
  return true;
}

}  // namespace collective
}  // namespace kiln
