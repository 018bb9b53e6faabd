// The rendezvous stores of multi-process SPMD runs: file and tcp, set/get
// between threads and between processes (fork), the channel id exchange of
// kiln_collective_group_create, and their errors (timeouts that name what
// was awaited, stale files, bad URIs).
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "collective/rendezvous.h"
#include "status_test_util.h"

namespace kiln {
namespace collective {
namespace {

using testing::StatusInfo;
using testing::Take;

kiln_time_t In(double seconds) {
  return kiln_deadline_from_timeout(int64_t(seconds * 1e9));
}

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/kiln_rendezvous_XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf " + path_).c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(FileRendezvousTest, SetThenGetAcrossThreads) {
  TempDir dir;
  std::unique_ptr<Rendezvous> writer, reader;
  ASSERT_OK(OpenRendezvous("file:" + dir.path(), true, In(1), &writer));
  ASSERT_OK(OpenRendezvous("file:" + dir.path(), false, In(1), &reader));
  std::string value;
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    kiln_status_free(writer->Set("key", std::string("a\0b", 3)));
  });
  ASSERT_OK(reader->Get("key", In(10), &value));
  late.join();
  EXPECT_EQ(value, std::string("a\0b", 3));
  // A key is set once: a second set (or a file left by an earlier run) is
  // an error that names the file.
  StatusInfo again = Take(writer->Set("key", "other"));
  EXPECT_EQ(again.code, KILN_STATUS_ALREADY_EXISTS);
  EXPECT_NE(again.message.find(dir.path() + "/key"), std::string::npos);
  ASSERT_OK(writer->Remove("key"));
  ASSERT_OK(writer->Remove("key"));  // already gone: fine
  ASSERT_OK(writer->Set("key", "other"));
}

TEST(FileRendezvousTest, TimeoutNamesWhatWasAwaited) {
  TempDir dir;
  std::unique_ptr<Rendezvous> store;
  ASSERT_OK(OpenRendezvous("file:" + dir.path(), false, In(1), &store));
  std::string value;
  StatusInfo info = Take(store->Get("never", In(0.05), &value));
  EXPECT_EQ(info.code, KILN_STATUS_DEADLINE_EXCEEDED);
  EXPECT_NE(info.message.find(dir.path() + "/never"), std::string::npos)
      << info.message;
}

TEST(RendezvousTest, BadUrisAndKeys) {
  std::unique_ptr<Rendezvous> store;
  StatusInfo info = Take(OpenRendezvous("file:/no/such/dir", false, In(1),
                                        &store));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("not a directory"), std::string::npos);
  info = Take(OpenRendezvous("tcp://127.0.0.1", true, In(1), &store));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("tcp://HOST:PORT"), std::string::npos);
  info = Take(OpenRendezvous("tcp://127.0.0.1:999999", true, In(1), &store));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  info = Take(OpenRendezvous("nfs://x", true, In(1), &store));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("file:DIR or tcp://HOST:PORT"),
            std::string::npos);
  TempDir dir;
  ASSERT_OK(OpenRendezvous("file:" + dir.path(), false, In(1), &store));
  info = Take(store->Set("../escape", "x"));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
}

TEST(TcpRendezvousTest, ServerAndClientsExchangeValues) {
  std::unique_ptr<Rendezvous> server;
  ASSERT_OK(OpenRendezvous("tcp://127.0.0.1:0", true, In(1), &server));
  const std::string uri = server->uri();
  ASSERT_EQ(uri.rfind("tcp://127.0.0.1:", 0), 0u) << uri;
  ASSERT_NE(uri, "tcp://127.0.0.1:0");
  std::vector<std::thread> clients;
  std::vector<std::string> seen(3);
  for (int c = 0; c < 3; ++c) {
    clients.emplace_back([&, c] {
      std::unique_ptr<Rendezvous> client;
      kiln_status_t status = OpenRendezvous(uri, false, In(10), &client);
      if (status) {
        seen[c] = kiln_status_message(status);
        kiln_status_free(status);
        return;
      }
      kiln_status_free(client->Get("id", In(10), &seen[c]));
      kiln_status_free(client->Set("ack-" + std::to_string(c), "ok"));
    });
  }
  ASSERT_OK(server->Set("id", "the-id"));
  for (int c = 0; c < 3; ++c) {
    std::string ack;
    ASSERT_OK(server->Get("ack-" + std::to_string(c), In(10), &ack));
    EXPECT_EQ(ack, "ok");
  }
  for (std::thread& client : clients) client.join();
  for (const std::string& value : seen) EXPECT_EQ(value, "the-id");
}

TEST(TcpRendezvousTest, ClientTimesOutWithoutServer) {
  // Take a free port, then close it so nothing listens there.
  std::string uri;
  {
    std::unique_ptr<Rendezvous> server;
    ASSERT_OK(OpenRendezvous("tcp://127.0.0.1:0", true, In(1), &server));
    uri = server->uri();
  }
  std::unique_ptr<Rendezvous> client;
  StatusInfo info = Take(OpenRendezvous(uri, false, In(0.2), &client));
  EXPECT_EQ(info.code, KILN_STATUS_DEADLINE_EXCEEDED);
  EXPECT_NE(info.message.find(uri), std::string::npos) << info.message;
  EXPECT_NE(info.message.find("rank 0"), std::string::npos) << info.message;
}

TEST(TcpRendezvousTest, PortInUseIsAnError) {
  std::unique_ptr<Rendezvous> first, second;
  ASSERT_OK(OpenRendezvous("tcp://127.0.0.1:0", true, In(1), &first));
  StatusInfo info = Take(OpenRendezvous(first->uri(), true, In(1), &second));
  EXPECT_EQ(info.code, KILN_STATUS_UNAVAILABLE);
  EXPECT_NE(info.message.find("in use"), std::string::npos) << info.message;
}

// The channel id exchange between processes: rank 0's process publishes,
// processes owning ranks 1..2 and 3 read it and acknowledge, rank 0 walks
// the acknowledgements and cleans up. Children report through exit codes.
void ExchangeAcrossProcesses(const std::string& uri) {
  std::unique_ptr<Rendezvous> server;
  std::string serve_uri = uri;
  if (uri.rfind("tcp://", 0) == 0) {
    ASSERT_OK(OpenRendezvous(uri, true, In(1), &server));
    serve_uri = server->uri();
  }
  struct Child {
    int first_rank, rank_count;
  };
  const Child children[] = {{1, 2}, {3, 1}};
  std::vector<pid_t> pids;
  for (const Child& child : children) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::unique_ptr<Rendezvous> store;
      kiln_status_t status = OpenRendezvous(serve_uri, false, In(10), &store);
      std::string id;
      if (!status) {
        status = ExchangeChannelId(store.get(), child.first_rank,
                                   child.rank_count, 4, In(10), &id);
      }
      _exit(status ? 2 : id == "local-group-7" ? 0 : 3);
    }
    pids.push_back(pid);
  }
  std::unique_ptr<Rendezvous> store;
  if (server) {
    store = std::move(server);
  } else {
    ASSERT_OK(OpenRendezvous(serve_uri, true, In(1), &store));
  }
  std::string id = "local-group-7";
  ASSERT_OK(ExchangeChannelId(store.get(), 0, 1, 4, In(10), &id));
  for (pid_t pid : pids) {
    int wstatus = 0;
    ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
    EXPECT_TRUE(WIFEXITED(wstatus));
    EXPECT_EQ(WEXITSTATUS(wstatus), 0);
  }
  // Nothing is left for the next run.
  std::string value;
  StatusInfo info = Take(store->Get("kiln-channel-id", In(0), &value));
  EXPECT_EQ(info.code, KILN_STATUS_DEADLINE_EXCEEDED);
}

TEST(ExchangeChannelIdTest, FileStoreAcrossProcesses) {
  TempDir dir;
  ExchangeAcrossProcesses("file:" + dir.path());
}

TEST(ExchangeChannelIdTest, TcpStoreAcrossProcesses) {
  ExchangeAcrossProcesses("tcp://127.0.0.1:0");
}

TEST(ExchangeChannelIdTest, MissingProcessTimesOutNamingIt) {
  TempDir dir;
  std::unique_ptr<Rendezvous> store;
  ASSERT_OK(OpenRendezvous("file:" + dir.path(), true, In(1), &store));
  std::string id = "x";
  StatusInfo info = Take(ExchangeChannelId(store.get(), 0, 2, 3, In(0.1), &id));
  EXPECT_EQ(info.code, KILN_STATUS_DEADLINE_EXCEEDED);
  EXPECT_NE(info.message.find("rank 2 of 3"), std::string::npos)
      << info.message;
  // A process waiting for rank 0 says so too.
  info = Take(ExchangeChannelId(store.get(), 1, 1, 2, In(0.1), &id));
  EXPECT_EQ(info.code, KILN_STATUS_DEADLINE_EXCEEDED);
  EXPECT_NE(info.message.find("channel id of rank 0"), std::string::npos)
      << info.message;
}

}  // namespace
}  // namespace collective
}  // namespace kiln
