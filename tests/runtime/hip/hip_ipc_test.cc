// The platform calls that symmetric windows over NCCL/RCCL channels build on
// (hip_comm_window.cc), between two processes on one GPU: a child process
// allocates device memory (plain and signal memory) and exports it; the
// parent opens the IPC handles, reads the child's pattern and writes its
// own, which the child then finds in its memory. Both pin a POSIX shared
// memory segment for the GPU (hostRegister, hostGetDevicePointer) and each
// writes into it through the device address by a copy, which the other
// reads on the host: that is how a window's abort and "closed" words travel.
// Skips where there is no GPU. The child is forked before either process
// touches the GPU runtime.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "drivers/hip/hip_platform.h"
#include "drivers/hip/status_util.h"
#include "kiln/hal/hal.h"

namespace {

using kiln::hip::IpcMemHandle;
using kiln::hip::Platform;

constexpr size_t kBytes = 1 << 20;
constexpr size_t kSignalBytes = 4096;
constexpr uint32_t kChildPattern = 0xc0ffee01u;
constexpr uint32_t kParentPattern = 0x5eed0002u;

// What the child sends first: whether it has a GPU, then its handles.
struct Hello {
  char skip[200]; // nonempty: no GPU here, and why
  IpcMemHandle data;
  IpcMemHandle signals;
};

bool writeAll(int fd, const void *bytes, size_t size) {
  auto *p = static_cast<const char *>(bytes);
  while (size) {
    ssize_t n = write(fd, p, size);
    if (n <= 0)
      return false;
    p += n;
    size -= size_t(n);
  }
  return true;
}

bool readAll(int fd, void *bytes, size_t size) {
  auto *p = static_cast<char *>(bytes);
  while (size) {
    ssize_t n = read(fd, p, size);
    if (n <= 0)
      return false;
    p += n;
    size -= size_t(n);
  }
  return true;
}

// The platform with device 0 current, or why not.
std::string openGpu(std::shared_ptr<Platform> *platform) {
  kiln::hip::setHostApi(kiln_hal_host_api());
  kiln_status_t status = kiln::hip::selectPlatform(platform);
  if (status) {
    std::string why = kiln_status_message(status);
    kiln_status_free(status);
    return why.empty() ? "no GPU platform" : why;
  }
  if ((*platform)->setDevice(0) != 0)
    return "cannot select device 0";
  return "";
}

// Copies |value| into the host memory at |host| (registered) through its
// device address, by a device-side copy from device memory.
bool writeThroughDevice(Platform &platform, void *host, uint64_t value) {
  void *device = nullptr;
  void *staging = nullptr;
  bool ok = platform.hostGetDevicePointer(&device, host) == 0 &&
            platform.malloc(&staging, 8) == 0 &&
            platform.memcpyAsync(staging, &value, 8, nullptr) == 0 &&
            platform.memcpyAsync(device, staging, 8, nullptr) == 0 &&
            platform.streamSynchronize(nullptr) == 0;
  if (staging)
    platform.free(staging);
  return ok;
}

// The child: exports its memory, waits for the parent, checks what the
// parent wrote. Exit status 0 on success, else the failed step.
int child(int toParent, int fromParent, uint64_t *segment) {
  std::shared_ptr<Platform> platform;
  Hello hello = {};
  std::string why = openGpu(&platform);
  if (!why.empty()) {
    std::snprintf(hello.skip, sizeof(hello.skip), "%s", why.c_str());
    return writeAll(toParent, &hello, sizeof(hello)) ? 0 : 1;
  }
  void *data = nullptr;
  void *signals = nullptr;
  if (platform->malloc(&data, kBytes) != 0)
    return 2;
  if (platform->mallocSignals(&signals, kSignalBytes) != 0)
    return 3;
  if (platform->memsetD32Async(data, kChildPattern, kBytes / 4, nullptr) != 0 ||
      platform->memsetD32Async(signals, kChildPattern, kSignalBytes / 4,
                               nullptr) != 0 ||
      platform->streamSynchronize(nullptr) != 0)
    return 4;
  if (platform->ipcGetMemHandle(&hello.data, data) != 0 ||
      platform->ipcGetMemHandle(&hello.signals, signals) != 0)
    return 5;
  if (platform->hostRegister(segment, 4096) != 0)
    return 6;
  if (!writeThroughDevice(*platform, segment + 1, 0x1111))
    return 7;
  if (!writeAll(toParent, &hello, sizeof(hello)))
    return 8;
  char done = 0;
  if (!readAll(fromParent, &done, 1) || done != 'd')
    return 9;
  std::vector<uint32_t> words(kBytes / 4);
  if (platform->memcpyAsync(words.data(), data, kBytes, nullptr) != 0 ||
      platform->streamSynchronize(nullptr) != 0)
    return 10;
  for (uint32_t word : words)
    if (word != kParentPattern)
      return 11;
  uint64_t signal = 0;
  if (platform->memcpyAsync(&signal, signals, 8, nullptr) != 0 ||
      platform->streamSynchronize(nullptr) != 0 || signal != 42)
    return 12;
  // The parent's word arrived through its device address.
  if (__atomic_load_n(segment + 2, __ATOMIC_ACQUIRE) != 0x2222)
    return 13;
  platform->hostUnregister(segment);
  platform->free(data);
  platform->free(signals);
  return 0;
}

TEST(HipIpcTest, SecondProcessMapsMemoryAndSharesAPinnedSegment) {
  char name[64];
  std::snprintf(name, sizeof(name), "/kiln-ipc-test-%d", int(getpid()));
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(ftruncate(fd, 4096), 0);
  void *mapping =
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  shm_unlink(name);
  ASSERT_NE(mapping, MAP_FAILED);
  auto *segment = static_cast<uint64_t *>(mapping);

  int toParent[2], fromParent[2];
  ASSERT_EQ(pipe(toParent), 0);
  ASSERT_EQ(pipe(fromParent), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(toParent[0]);
    close(fromParent[1]);
    _exit(child(toParent[1], fromParent[0], segment));
  }
  close(toParent[1]);
  close(fromParent[0]);
  auto childStatus = [&] {
    close(fromParent[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
  };
  Hello hello = {};
  if (!readAll(toParent[0], &hello, sizeof(hello))) {
    int status = childStatus();
    FAIL() << "the child failed before exporting its memory (step " << status
           << ")";
  }
  if (hello.skip[0]) {
    childStatus();
    GTEST_SKIP() << "no GPU for the hip driver here: " << hello.skip;
  }
  std::shared_ptr<Platform> platform;
  std::string why = openGpu(&platform);
  ASSERT_EQ(why, "");

  // The child's memory, mapped into this process.
  void *data = nullptr;
  void *signals = nullptr;
  ASSERT_EQ(platform->ipcOpenMemHandle(&data, hello.data), 0);
  ASSERT_EQ(platform->ipcOpenMemHandle(&signals, hello.signals), 0);
  std::vector<uint32_t> words(kBytes / 4);
  ASSERT_EQ(platform->memcpyAsync(words.data(), data, kBytes, nullptr), 0);
  ASSERT_EQ(platform->streamSynchronize(nullptr), 0);
  size_t matching = 0;
  for (uint32_t word : words)
    matching += word == kChildPattern;
  EXPECT_EQ(matching, words.size());
  ASSERT_EQ(platform->memsetD32Async(data, kParentPattern, kBytes / 4, nullptr),
            0);
  uint64_t signal = 42;
  ASSERT_EQ(platform->memcpyAsync(signals, &signal, 8, nullptr), 0);
  ASSERT_EQ(platform->streamSynchronize(nullptr), 0);
  EXPECT_EQ(platform->ipcCloseMemHandle(data), 0);
  EXPECT_EQ(platform->ipcCloseMemHandle(signals), 0);

  // The segment: the child's word came through its device address; ours
  // goes the same way.
  EXPECT_EQ(__atomic_load_n(segment + 1, __ATOMIC_ACQUIRE), 0x1111u);
  ASSERT_EQ(platform->hostRegister(segment, 4096), 0);
  EXPECT_TRUE(writeThroughDevice(*platform, segment + 2, 0x2222));
  EXPECT_EQ(platform->hostUnregister(segment), 0);

  char done = 'd';
  ASSERT_TRUE(writeAll(fromParent[1], &done, 1));
  EXPECT_EQ(childStatus(), 0) << "the child's failed step (see child())";
  close(toParent[0]);
  munmap(mapping, 4096);
}

} // namespace
