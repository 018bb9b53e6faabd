#include "collective/rendezvous.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {
namespace collective {
namespace {

constexpr uint32_t kMaxValueLength = 1u << 20;
constexpr size_t kMaxKeyLength = 128;
// How often readers look for a key that is not there yet.
constexpr auto kPollInterval = std::chrono::milliseconds(10);

bool ValidKey(const std::string& key) {
  if (key.empty() || key.size() > kMaxKeyLength || key[0] == '.') return false;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

kiln_status_t CheckKey(const std::string& key) {
  if (ValidKey(key)) return kiln_ok_status();
  return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                          "invalid rendezvous key '%s' (expected up to %zu "
                          "characters of [A-Za-z0-9_.-])", key.c_str(),
                          kMaxKeyLength);
}

double SecondsUntil(kiln_time_t deadline, kiln_time_t start) {
  return double(deadline - start) / 1e9;
}

kiln_status_t Timeout(const std::string& what, const std::string& uri,
                      kiln_time_t start, kiln_time_t deadline) {
  return kiln_make_status(KILN_STATUS_DEADLINE_EXCEEDED,
                          "timed out after %.1f s waiting for %s at "
                          "rendezvous '%s'", SecondsUntil(deadline, start),
                          what.c_str(), uri.c_str());
}

//===----------------------------------------------------------------------===//
// file:DIR
//===----------------------------------------------------------------------===//

class FileRendezvous final : public Rendezvous {
 public:
  explicit FileRendezvous(std::string directory)
      : directory_(std::move(directory)) {}

  kiln_status_t Set(const std::string& key, const std::string& value) override {
    KILN_RETURN_IF_ERROR(CheckKey(key));
    // The temporary name is unique per process and call; link() then
    // publishes the complete file atomically and fails if the key exists.
    static std::atomic<uint64_t> counter{0};
    std::string temporary = directory_ + "/.tmp." + key + "." +
                            std::to_string(getpid()) + "." +
                            std::to_string(counter.fetch_add(1));
    int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                  0644);
    if (fd < 0) return Errno("create", temporary);
    size_t written = 0;
    while (written < value.size()) {
      ssize_t n = write(fd, value.data() + written, value.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        kiln_status_t status = Errno("write", temporary);
        close(fd);
        unlink(temporary.c_str());
        return status;
      }
      written += size_t(n);
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
      kiln_status_t status = Errno("write", temporary);
      unlink(temporary.c_str());
      return status;
    }
    std::string path = Path(key);
    int linked = link(temporary.c_str(), path.c_str());
    int link_errno = errno;
    unlink(temporary.c_str());
    if (linked != 0 && link_errno == EEXIST) {
      return kiln_make_status(KILN_STATUS_ALREADY_EXISTS,
                              "rendezvous file '%s' already exists (left over "
                              "from an earlier run?); remove it or use a "
                              "fresh directory", path.c_str());
    }
    if (linked != 0) {
      errno = link_errno;
      return Errno("publish", path);
    }
    return kiln_ok_status();
  }

  kiln_status_t Get(const std::string& key, kiln_time_t deadline,
                    std::string* out_value) override {
    KILN_RETURN_IF_ERROR(CheckKey(key));
    const std::string path = Path(key);
    const kiln_time_t start = kiln_time_now();
    while (true) {
      int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) {
        std::string value;
        char chunk[4096];
        ssize_t n = 0;
        while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
          if (n < 0 && errno == EINTR) continue;
          if (n < 0) {
            kiln_status_t status = Errno("read", path);
            close(fd);
            return status;
          }
          value.append(chunk, size_t(n));
          if (value.size() > kMaxValueLength) break;
        }
        close(fd);
        if (value.size() > kMaxValueLength) {
          return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                                  "rendezvous file '%s' is larger than %u "
                                  "bytes", path.c_str(), kMaxValueLength);
        }
        *out_value = std::move(value);
        return kiln_ok_status();
      }
      if (errno != ENOENT) return Errno("open", path);
      if (kiln_time_now() >= deadline) {
        return Timeout("file '" + path + "'", uri(), start, deadline);
      }
      std::this_thread::sleep_for(kPollInterval);
    }
  }

  kiln_status_t Remove(const std::string& key) override {
    KILN_RETURN_IF_ERROR(CheckKey(key));
    std::string path = Path(key);
    if (unlink(path.c_str()) != 0 && errno != ENOENT) {
      return Errno("remove", path);
    }
    return kiln_ok_status();
  }

  std::string uri() const override { return "file:" + directory_; }

 private:
  std::string Path(const std::string& key) const {
    return directory_ + "/" + key;
  }
  kiln_status_t Errno(const char* action, const std::string& path) const {
    return kiln_make_status(KILN_STATUS_UNAVAILABLE,
                            "rendezvous '%s': cannot %s '%s': %s",
                            uri().c_str(), action, path.c_str(),
                            std::strerror(errno));
  }

  std::string directory_;
};

//===----------------------------------------------------------------------===//
// tcp://HOST:PORT
//===----------------------------------------------------------------------===//
// Requests: op byte ('S' set, 'G' get, 'R' remove), u32 key length, key,
// and for 'S' a u32 value length and the value. Replies: one status byte
// (kFound, kMissing, kExists, kDone), then for a found 'G' the u32 length
// and the value. Integers are little endian (loopback or one cluster).

enum : uint8_t { kDone = 0, kFound = 1, kMissing = 2, kExists = 3 };

bool SendAll(int fd, const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = send(fd, bytes, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= size_t(n);
  }
  return true;
}

bool RecvAll(int fd, void* data, size_t size) {
  char* bytes = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = recv(fd, bytes, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= size_t(n);
  }
  return true;
}

bool SendString(int fd, const std::string& text) {
  uint32_t length = uint32_t(text.size());
  return SendAll(fd, &length, sizeof(length)) &&
         SendAll(fd, text.data(), text.size());
}

bool RecvString(int fd, std::string* text) {
  uint32_t length = 0;
  if (!RecvAll(fd, &length, sizeof(length)) || length > kMaxValueLength) {
    return false;
  }
  text->resize(length);
  return RecvAll(fd, text->data(), length);
}

kiln_status_t ParseTcpUri(const std::string& uri, std::string* host,
                          std::string* port) {
  const std::string rest = uri.substr(6);  // after "tcp://"
  size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size() ||
      rest.size() - colon - 1 > 5 ||
      rest.find_first_not_of("0123456789", colon + 1) != std::string::npos ||
      std::stoul(rest.substr(colon + 1)) > 65535) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "invalid rendezvous '%s' (expected "
                            "tcp://HOST:PORT)", uri.c_str());
  }
  *host = rest.substr(0, colon);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  *port = rest.substr(colon + 1);
  return kiln_ok_status();
}

// The key-value map of a tcp store, served by the process of rank 0.
class TcpServer final : public Rendezvous {
 public:
  ~TcpServer() override {
    stopping_ = true;
    if (listener_ >= 0) shutdown(listener_, SHUT_RDWR);
    if (acceptor_.joinable()) acceptor_.join();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (int fd : connections_) shutdown(fd, SHUT_RDWR);
    }
    for (std::thread& thread : handlers_) thread.join();
    for (int fd : connections_) close(fd);
    if (listener_ >= 0) close(listener_);
  }

  kiln_status_t Listen(const std::string& host, const std::string& port) {
    addrinfo hints = {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* addresses = nullptr;
    int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &addresses);
    if (rc != 0) {
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "rendezvous host '%s': %s", host.c_str(),
                              gai_strerror(rc));
    }
    std::string error = "no address";
    for (addrinfo* a = addresses; a; a = a->ai_next) {
      int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC,
                      a->ai_protocol);
      if (fd < 0) continue;
      int one = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 64) == 0) {
        listener_ = fd;
        break;
      }
      error = std::strerror(errno);
      close(fd);
    }
    freeaddrinfo(addresses);
    if (listener_ < 0) {
      return kiln_make_status(KILN_STATUS_UNAVAILABLE,
                              "cannot serve rendezvous tcp://%s:%s: %s (is "
                              "the port in use?)", host.c_str(), port.c_str(),
                              error.c_str());
    }
    sockaddr_storage bound = {};
    socklen_t length = sizeof(bound);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&bound), &length);
    uint16_t bound_port =
        bound.ss_family == AF_INET6
            ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
            : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    bool v6 = host.find(':') != std::string::npos;
    uri_ = "tcp://" + (v6 ? "[" + host + "]" : host) + ":" +
           std::to_string(bound_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
    return kiln_ok_status();
  }

  kiln_status_t Set(const std::string& key, const std::string& value) override {
    KILN_RETURN_IF_ERROR(CheckKey(key));
    if (value.size() > kMaxValueLength) {
      return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                              "rendezvous value of %zu bytes is larger than "
                              "%u", value.size(), kMaxValueLength);
    }
    if (!Store(key, value)) {
      return kiln_make_status(KILN_STATUS_ALREADY_EXISTS,
                              "rendezvous key '%s' is already set at '%s'",
                              key.c_str(), uri_.c_str());
    }
    return kiln_ok_status();
  }

  kiln_status_t Get(const std::string& key, kiln_time_t deadline,
                    std::string* out_value) override {
    KILN_RETURN_IF_ERROR(CheckKey(key));
    const kiln_time_t start = kiln_time_now();
    while (!Load(key, out_value)) {
      if (kiln_time_now() >= deadline) {
        return Timeout("key '" + key + "'", uri_, start, deadline);
      }
      std::this_thread::sleep_for(kPollInterval);
    }
    return kiln_ok_status();
  }

  kiln_status_t Remove(const std::string& key) override {
    KILN_RETURN_IF_ERROR(CheckKey(key));
    std::lock_guard<std::mutex> lock(mutex_);
    values_.erase(key);
    return kiln_ok_status();
  }

  std::string uri() const override { return uri_; }

 private:
  bool Store(const std::string& key, const std::string& value) {
    std::lock_guard<std::mutex> lock(mutex_);
    return values_.emplace(key, value).second;
  }
  bool Load(const std::string& key, std::string* value) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = values_.find(key);
    if (it == values_.end()) return false;
    *value = it->second;
    return true;
  }

  void AcceptLoop() {
    while (!stopping_) {
      pollfd fds = {listener_, POLLIN, 0};
      if (poll(&fds, 1, 100) <= 0) continue;
      int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) {
        close(fd);
        break;
      }
      connections_.push_back(fd);
      handlers_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  // Answers the requests of one client until it disconnects or sends
  // something malformed.
  void Serve(int fd) {
    while (true) {
      uint8_t op = 0;
      std::string key, value;
      if (!RecvAll(fd, &op, 1) || !RecvString(fd, &key) || !ValidKey(key)) {
        break;
      }
      uint8_t reply = kDone;
      if (op == 'S') {
        if (!RecvString(fd, &value)) break;
        reply = Store(key, value) ? kDone : kExists;
      } else if (op == 'G') {
        reply = Load(key, &value) ? kFound : kMissing;
      } else if (op == 'R') {
        std::lock_guard<std::mutex> lock(mutex_);
        values_.erase(key);
      } else {
        break;
      }
      if (!SendAll(fd, &reply, 1)) break;
      if (reply == kFound && !SendString(fd, value)) break;
    }
    shutdown(fd, SHUT_RDWR);
  }

  std::string uri_;
  int listener_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::mutex mutex_;  // guards values_, connections_, handlers_
  std::map<std::string, std::string> values_;
  std::vector<int> connections_;
  std::vector<std::thread> handlers_;
};

class TcpClient final : public Rendezvous {
 public:
  TcpClient(std::string uri, int fd) : uri_(std::move(uri)), fd_(fd) {}
  ~TcpClient() override { close(fd_); }

  static kiln_status_t Connect(const std::string& uri, const std::string& host,
                               const std::string& port, kiln_time_t deadline,
                               std::unique_ptr<Rendezvous>* out) {
    addrinfo hints = {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    const kiln_time_t start = kiln_time_now();
    std::string error = "no address";
    while (true) {
      addrinfo* addresses = nullptr;
      int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &addresses);
      if (rc != 0) {
        error = gai_strerror(rc);
      } else {
        for (addrinfo* a = addresses; a; a = a->ai_next) {
          int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC,
                          a->ai_protocol);
          if (fd < 0) continue;
          if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            freeaddrinfo(addresses);
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            out->reset(new TcpClient(uri, fd));
            return kiln_ok_status();
          }
          error = std::strerror(errno);
          close(fd);
        }
        freeaddrinfo(addresses);
      }
      if (kiln_time_now() >= deadline) {
        return kiln_make_status(
            KILN_STATUS_DEADLINE_EXCEEDED,
            "timed out after %.1f s connecting to rendezvous '%s' (last "
            "error: %s); is the process of rank 0 running and serving it?",
            SecondsUntil(deadline, start), uri.c_str(), error.c_str());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  kiln_status_t Set(const std::string& key, const std::string& value) override {
    KILN_RETURN_IF_ERROR(CheckKey(key));
    if (value.size() > kMaxValueLength) {
      return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                              "rendezvous value of %zu bytes is larger than "
                              "%u", value.size(), kMaxValueLength);
    }
    uint8_t reply = 0;
    KILN_RETURN_IF_ERROR(Request('S', key, &value, &reply, nullptr));
    if (reply == kExists) {
      return kiln_make_status(KILN_STATUS_ALREADY_EXISTS,
                              "rendezvous key '%s' is already set at '%s'",
                              key.c_str(), uri_.c_str());
    }
    return kiln_ok_status();
  }

  kiln_status_t Get(const std::string& key, kiln_time_t deadline,
                    std::string* out_value) override {
    KILN_RETURN_IF_ERROR(CheckKey(key));
    const kiln_time_t start = kiln_time_now();
    while (true) {
      uint8_t reply = 0;
      KILN_RETURN_IF_ERROR(Request('G', key, nullptr, &reply, out_value));
      if (reply == kFound) return kiln_ok_status();
      if (kiln_time_now() >= deadline) {
        return Timeout("key '" + key + "'", uri_, start, deadline);
      }
      std::this_thread::sleep_for(kPollInterval);
    }
  }

  kiln_status_t Remove(const std::string& key) override {
    KILN_RETURN_IF_ERROR(CheckKey(key));
    uint8_t reply = 0;
    return Request('R', key, nullptr, &reply, nullptr);
  }

  std::string uri() const override { return uri_; }

 private:
  kiln_status_t Request(uint8_t op, const std::string& key,
                        const std::string* value, uint8_t* reply,
                        std::string* out_value) {
    std::lock_guard<std::mutex> lock(mutex_);
    bool ok = SendAll(fd_, &op, 1) && SendString(fd_, key) &&
              (!value || SendString(fd_, *value)) && RecvAll(fd_, reply, 1) &&
              (*reply != kFound || !out_value || RecvString(fd_, out_value));
    if (!ok) {
      return kiln_make_status(KILN_STATUS_UNAVAILABLE,
                              "lost the connection to rendezvous '%s' (did "
                              "the process of rank 0 exit?)", uri_.c_str());
    }
    return kiln_ok_status();
  }

  std::string uri_;
  int fd_;
  std::mutex mutex_;  // one request at a time on the connection
};

}  // namespace

kiln_status_t OpenRendezvous(const std::string& uri, bool serve,
                             kiln_time_t deadline,
                             std::unique_ptr<Rendezvous>* out) {
  out->reset();
  if (uri.rfind("file:", 0) == 0) {
    std::string directory = uri.substr(5);
    // "file:///dir" is accepted as a URL spelling of "file:/dir".
    if (directory.rfind("//", 0) == 0) directory = directory.substr(2);
    struct stat info = {};
    if (directory.empty() || stat(directory.c_str(), &info) != 0 ||
        !S_ISDIR(info.st_mode)) {
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "rendezvous '%s': '%s' is not a directory "
                              "(create it, on a file system every process "
                              "sees)", uri.c_str(), directory.c_str());
    }
    out->reset(new FileRendezvous(directory));
    return kiln_ok_status();
  }
  if (uri.rfind("tcp://", 0) == 0) {
    std::string host, port;
    KILN_RETURN_IF_ERROR(ParseTcpUri(uri, &host, &port));
    if (serve) {
      std::unique_ptr<TcpServer> server(new TcpServer());
      KILN_RETURN_IF_ERROR(server->Listen(host, port));
      *out = std::move(server);
      return kiln_ok_status();
    }
    return TcpClient::Connect(uri, host, port, deadline, out);
  }
  return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                          "invalid rendezvous '%s' (expected file:DIR or "
                          "tcp://HOST:PORT)", uri.c_str());
}

kiln_status_t ExchangeChannelId(Rendezvous* store, int32_t first_rank,
                                int32_t rank_count, int32_t world_size,
                                kiln_time_t deadline, std::string* id) {
  const std::string id_key = "kiln-channel-id";
  if (first_rank != 0) {
    kiln_status_t status = store->Get(id_key, deadline, id);
    if (!kiln_status_is_ok(status)) {
      return kiln_status_annotate(status, "ranks %d..%d waited for the "
                                  "channel id of rank 0", first_rank,
                                  first_rank + rank_count - 1);
    }
    return store->Set("kiln-ack-" + std::to_string(first_rank),
                      std::to_string(rank_count));
  }
  KILN_RETURN_IF_ERROR(store->Set(id_key, *id));
  // Each other process acknowledges its first rank with its rank count, so
  // walking the acknowledgements from rank_count visits every process.
  std::vector<std::string> acks;
  kiln_status_t status = kiln_ok_status();
  for (int32_t next = rank_count; next < world_size;) {
    std::string key = "kiln-ack-" + std::to_string(next);
    std::string value;
    status = store->Get(key, deadline, &value);
    if (!kiln_status_is_ok(status)) {
      status = kiln_status_annotate(status, "rank 0 waited for the process "
                                    "owning rank %d of %d to read the "
                                    "channel id", next, world_size);
      break;
    }
    acks.push_back(key);
    char* end = nullptr;
    long count = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || count <= 0 ||
        count > world_size - next) {
      status = kiln_make_status(KILN_STATUS_DATA_LOSS,
                                "rendezvous '%s': key '%s' holds '%s', not a "
                                "rank count", store->uri().c_str(),
                                key.c_str(), value.c_str());
      break;
    }
    next += int32_t(count);
  }
  // Leave nothing behind for the next run, even after a failure.
  kiln_status_free(store->Remove(id_key));
  for (const std::string& key : acks) kiln_status_free(store->Remove(key));
  return status;
}

}  // namespace collective
}  // namespace kiln
