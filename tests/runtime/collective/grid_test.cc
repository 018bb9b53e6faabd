// Placement of ranks in a function's channels (collective/grid.h): the color
// and key each rank passes to kiln_hal_channel_split.
#include <gtest/gtest.h>

#include "collective/grid.h"

namespace kiln {
namespace collective {
namespace {

TEST(GridTest, RowsAndColumnsOfATwoByThreeGrid) {
  const std::vector<int64_t> grid = {2, 3};
  EXPECT_EQ(GridSize(grid), 6);
  // Rank 4 has coordinates (1, 1).
  ChannelPlacement row = PlaceRank(grid, {1}, 4);
  EXPECT_EQ(row.color, 1);  // the second row
  EXPECT_EQ(row.key, 1);
  EXPECT_EQ(row.size, 3);
  ChannelPlacement column = PlaceRank(grid, {0}, 4);
  EXPECT_EQ(column.color, 1);  // the second column
  EXPECT_EQ(column.key, 1);
  EXPECT_EQ(column.size, 2);
  // Rank 5 = (1, 2): column 2, second in it.
  EXPECT_EQ(PlaceRank(grid, {0}, 5).color, 2);
  EXPECT_EQ(PlaceRank(grid, {0}, 5).key, 1);
}

TEST(GridTest, AxesOrderSetsTheKey) {
  const std::vector<int64_t> grid = {2, 3};
  // Over both axes in order the key is the rank; listed reversed, axis 1 is
  // the major one: rank 4 = (1, 1) -> 1 * 2 + 1.
  EXPECT_EQ(PlaceRank(grid, {0, 1}, 4).key, 4);
  EXPECT_EQ(PlaceRank(grid, {1, 0}, 4).key, 3);
  EXPECT_EQ(PlaceRank(grid, {1, 0}, 4).color, 0);
  EXPECT_TRUE(SpansWorldInOrder(grid, {0, 1}));
  EXPECT_FALSE(SpansWorldInOrder(grid, {1, 0}));
  EXPECT_FALSE(SpansWorldInOrder(grid, {1}));
}

TEST(GridTest, UnitAxesDoNotSplit) {
  EXPECT_TRUE(SpansWorldInOrder({1, 4}, {1}));
  EXPECT_TRUE(SpansWorldInOrder({4, 1}, {1, 0}));
  EXPECT_TRUE(SpansWorldInOrder({1}, {}));
  EXPECT_FALSE(SpansWorldInOrder({2}, {}));
  // No axes: every rank alone.
  ChannelPlacement alone = PlaceRank({2, 2}, {}, 3);
  EXPECT_EQ(alone.color, 3);
  EXPECT_EQ(alone.key, 0);
  EXPECT_EQ(alone.size, 1);
}

}  // namespace
}  // namespace collective
}  // namespace kiln
