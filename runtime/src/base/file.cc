#include "base/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <new>

namespace kiln {
namespace {

const char* fileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Closes the descriptor on every path out.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

kiln_status_t readRegularFile(const char* path, const char* what,
                              uint64_t max_bytes, std::vector<uint8_t>* out) {
  out->clear();
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused
  // below); it changes nothing for regular files.
  FileDescriptor file{open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
  if (file.fd < 0) {
    int error = errno;
    return kiln_make_status(
        error == ENOENT ? KILN_STATUS_NOT_FOUND : KILN_STATUS_PERMISSION_DENIED,
        "cannot open %s '%s': %s", what, path, std::strerror(error));
  }
  struct stat info;
  if (fstat(file.fd, &info) != 0) {
    return kiln_make_status(KILN_STATUS_DATA_LOSS, "cannot stat %s '%s': %s",
                            what, path, std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "cannot read %s '%s': it is %s, not a regular file",
                            what, path, fileKind(info.st_mode));
  }
  const uint64_t size = static_cast<uint64_t>(info.st_size);
  if (size > max_bytes) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s '%s' is %" PRIu64
                            " bytes, more than the %" PRIu64
                            " bytes it may have",
                            what, path, size, max_bytes);
  }
  try {
    out->resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc&) {
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "cannot allocate %" PRIu64 " bytes to read %s '%s'",
                            size, what, path);
  }
  size_t done = 0;
  while (true) {
    // One byte past the end: a file that grew while read is noticed.
    uint8_t extra = 0;
    uint8_t* target = done < out->size() ? out->data() + done : &extra;
    size_t wanted = done < out->size() ? out->size() - done : 1;
    ssize_t got = read(file.fd, target, wanted);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int error = errno;
      out->clear();
      return kiln_make_status(KILN_STATUS_DATA_LOSS,
                              "error reading %s '%s': %s", what, path,
                              std::strerror(error));
    }
    if (got == 0 && done == out->size()) return kiln_ok_status();
    if (got == 0 || done == out->size()) {
      out->clear();
      return kiln_make_status(KILN_STATUS_DATA_LOSS,
                              "%s '%s' changed size while it was read", what,
                              path);
    }
    done += static_cast<size_t>(got);
  }
}

}  // namespace kiln
