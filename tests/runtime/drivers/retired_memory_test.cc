// RetiredMemory (runtime/src/drivers/common/retired_memory.h): memory that
// peers may still map is kept until every peer closed it, freed as soon as
// they have, and freed after a bounded wait when its device goes.

#include "drivers/common/retired_memory.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace {

using kiln::drivers::RetiredMemory;

// Memory whose peers close it when the test says so; counts its frees.
class Memory final : public RetiredMemory::Entry {
public:
  explicit Memory(std::atomic<int> *freed) : freed_(freed) {}
  ~Memory() override { ++*freed_; }
  bool closedByAll() const override { return closed.load(); }
  std::atomic<bool> closed{false};

private:
  std::atomic<int> *freed_;
};

TEST(RetiredMemoryTest, FreesClosedMemoryAtOnceAndKeepsTheRest) {
  std::atomic<int> freed{0};
  RetiredMemory retired;
  auto closed = std::make_shared<Memory>(&freed);
  closed->closed = true;
  retired.retire(std::move(closed));
  EXPECT_EQ(freed.load(), 1);
  EXPECT_EQ(retired.size(), 0u);

  auto open = std::make_shared<Memory>(&freed);
  Memory *openView = open.get();
  retired.retire(std::move(open));
  EXPECT_EQ(freed.load(), 1);
  EXPECT_EQ(retired.size(), 1u);

  // Once its peers closed it, the next retirement frees it too.
  openView->closed = true;
  auto another = std::make_shared<Memory>(&freed);
  Memory *anotherView = another.get();
  retired.retire(std::move(another));
  EXPECT_EQ(freed.load(), 2);
  EXPECT_EQ(retired.size(), 1u);
  anotherView->closed = true;
  EXPECT_EQ(retired.drain(std::chrono::milliseconds(0)), 0u);
  EXPECT_EQ(freed.load(), 3);
}

TEST(RetiredMemoryTest, DrainWaitsForPeersThatAreClosing) {
  std::atomic<int> freed{0};
  RetiredMemory retired;
  auto memory = std::make_shared<Memory>(&freed);
  Memory *view = memory.get();
  retired.retire(std::move(memory));
  std::thread peer([view] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    view->closed = true;
  });
  int reported = 0;
  size_t forced =
      retired.drain(std::chrono::seconds(20),
                    [&](const RetiredMemory::Entry &) { ++reported; });
  peer.join();
  EXPECT_EQ(forced, 0u);
  EXPECT_EQ(reported, 0);
  EXPECT_EQ(freed.load(), 1);
}

TEST(RetiredMemoryTest, DrainFreesWhatPeersNeverCloseAfterTheBound) {
  std::atomic<int> freed{0};
  RetiredMemory retired;
  retired.retire(std::make_shared<Memory>(&freed));
  retired.retire(std::make_shared<Memory>(&freed));
  int reported = 0;
  auto start = std::chrono::steady_clock::now();
  size_t forced =
      retired.drain(std::chrono::milliseconds(100),
                    [&](const RetiredMemory::Entry &) { ++reported; });
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(forced, 2u);
  EXPECT_EQ(reported, 2);
  EXPECT_EQ(freed.load(), 2);
  // One bound for all entries, not one each.
  EXPECT_GE(waited, std::chrono::milliseconds(100));
  EXPECT_LT(waited, std::chrono::seconds(5));
  // After the drain (its device is going) nothing is kept.
  retired.retire(std::make_shared<Memory>(&freed));
  EXPECT_EQ(freed.load(), 3);
  EXPECT_EQ(retired.size(), 0u);
}

} // namespace
