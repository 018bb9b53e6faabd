// The compiler's C API (kiln/compiler.h): sessions from flags, compiles of
// good and bad programs with located diagnostics, modules that the runtime
// loads and runs on `local`, and compiles from several threads at once.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "kiln/compiler.h"
#include "kiln/runtime.h"

namespace {

constexpr const char *kAdd = R"(
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>)
                  outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
)";

struct Session {
  explicit Session(std::vector<const char *> flags = {}) {
    session = kiln_compiler_session_create(flags.data(), flags.size(), error,
                                           sizeof(error));
  }
  ~Session() { kiln_compiler_session_destroy(session); }
  kiln_compiler_session_t *session;
  char error[512];
};

struct Output {
  Output(const Session &s, const std::string &text, const char *name)
      : output(
            kiln_compiler_compile(s.session, text.data(), text.size(), name)) {}
  ~Output() { kiln_compiler_output_destroy(output); }
  // "file:line:col: message" of every diagnostic, one per line.
  std::string diagnostics() const {
    std::string text;
    for (size_t i = 0; i < kiln_compiler_output_diagnostic_count(output); ++i) {
      const kiln_compiler_diagnostic_t *d =
          kiln_compiler_output_diagnostic(output, i);
      text += std::string(d->file) + ":" + std::to_string(d->line) + ":" +
              std::to_string(d->column) + ": " + d->message + "\n";
    }
    return text;
  }
  kiln_compiler_output_t *output;
};

// Loads |output|'s module on local and returns main(1,2,3,4 + 10,20,30,40).
std::vector<float> runAdd(const Output &output) {
  std::vector<float> result(4, -1.0f);
  size_t size = 0;
  const void *bytes = kiln_compiler_output_module(output.output, &size);
  EXPECT_NE(bytes, nullptr);
  kiln_instance_options_t options = {};
  options.ignore_plugin_environment = true;
  kiln_instance_t *instance = nullptr;
  kiln_device_t *device = nullptr;
  kiln_module_t *module = nullptr;
  kiln_function_t *function = nullptr;
  kiln_buffer_view_t *inputs[2] = {nullptr, nullptr};
  kiln_buffer_view_t *out = nullptr;
  const int64_t shape[1] = {4};
  const float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40};
  kiln_status_t status = kiln_instance_create(&options, &instance);
  if (!status)
    status = kiln_device_create(instance, "local", &device);
  if (!status)
    status = kiln_module_load_memory(device, bytes, size, &module);
  if (!status)
    status = kiln_module_lookup_function(module, "main", &function);
  if (!status)
    status = kiln_buffer_view_create_from_host(device, KILN_ELEMENT_TYPE_F32, 1,
                                               shape, a, sizeof(a), &inputs[0]);
  if (!status)
    status = kiln_buffer_view_create_from_host(device, KILN_ELEMENT_TYPE_F32, 1,
                                               shape, b, sizeof(b), &inputs[1]);
  if (!status)
    status = kiln_function_call(function, 2, inputs, 1, &out);
  if (!status)
    status = kiln_buffer_view_read(out, result.data(), 4 * sizeof(float));
  if (status) {
    ADD_FAILURE() << kiln_status_message(status);
    kiln_status_free(status);
  }
  kiln_buffer_view_release(out);
  kiln_buffer_view_release(inputs[0]);
  kiln_buffer_view_release(inputs[1]);
  kiln_module_release(module);
  kiln_device_release(device);
  kiln_instance_release(instance);
  return result;
}

TEST(CompilerAPI, CompilesAModuleTheRuntimeRuns) {
  Session session({"--target=host"});
  ASSERT_NE(session.session, nullptr) << session.error;
  Output output(session, kAdd, "add.mlir");
  ASSERT_TRUE(kiln_compiler_output_ok(output.output)) << output.diagnostics();
  EXPECT_EQ(runAdd(output), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_STREQ(kiln_compiler_version(), "0.1.0");
}

TEST(CompilerAPI, DefaultFlagsCompileForTheHost) {
  Session session;
  ASSERT_NE(session.session, nullptr) << session.error;
  Output output(session, kAdd, nullptr);
  ASSERT_TRUE(kiln_compiler_output_ok(output.output)) << output.diagnostics();
  EXPECT_EQ(runAdd(output), (std::vector<float>{11, 22, 33, 44}));
}

TEST(CompilerAPI, BadFlagsAreRefusedWithTheReason) {
  struct Case {
    std::vector<const char *> flags;
    const char *error;
  } cases[] = {
      {{"--target=vulkan"}, "unsupported target 'vulkan'"},
      {{"--target=cuda", "--cuda-chip=sm_91"}, "unknown CUDA chip 'sm_91'"},
      {{"--target=host", "--rocm-chip=gfx942"},
       "--rocm-chip needs --target=rocm"},
      {{"--target=rocm,,host"}, "has an empty item"},
      {{"--host-opt-level=7"}, "--host-opt-level must be 0 to 3"},
      {{"--frobnicate=1"}, "unknown flag '--frobnicate'"},
      {{"target=host"}, "is not a flag"},
      {{"--target"}, "--target needs a value"},
  };
  for (const Case &c : cases) {
    Session session(c.flags);
    EXPECT_EQ(session.session, nullptr);
    EXPECT_NE(std::string(session.error).find(c.error), std::string::npos)
        << "got: " << session.error;
  }
  const char *flags[] = {nullptr};
  char error[64];
  EXPECT_EQ(kiln_compiler_session_create(flags, 1, error, sizeof(error)),
            nullptr);
  EXPECT_STREQ(error, "flag 0 is NULL");
}

TEST(CompilerAPI, ErrorsComeBackAsLocatedDiagnostics) {
  Session session;
  ASSERT_NE(session.session, nullptr);
  // A parse error, a type the compiler does not take, an unknown op.
  struct Case {
    std::string text;
    const char *expected;
  } cases[] = {
      {"func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %b : "
       "tensor<4xf32>\n}\n",
       "prog.mlir:2:10: use of undeclared SSA value name"},
      {"func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {\n  return %a : "
       "tensor<?xf32>\n}\n",
       "prog.mlir:1:"},
      {"func.func @f() {\n  \"nope.op\"() : () -> ()\n  return\n}\n",
       "prog.mlir:2:"},
  };
  for (const Case &c : cases) {
    Output output(session, c.text, "prog.mlir");
    EXPECT_FALSE(kiln_compiler_output_ok(output.output));
    size_t size = 1;
    EXPECT_EQ(kiln_compiler_output_module(output.output, &size), nullptr);
    EXPECT_EQ(size, 0u);
    ASSERT_GE(kiln_compiler_output_diagnostic_count(output.output), 1u);
    EXPECT_EQ(kiln_compiler_output_diagnostic(output.output, 0)->severity,
              KILN_COMPILER_SEVERITY_ERROR);
    EXPECT_NE(output.diagnostics().find(c.expected), std::string::npos)
        << output.diagnostics();
  }
}

// LLVM 22's linalg.reduce parser crashes after a malformed `dimensions`
// list; the API reports it instead.
TEST(CompilerAPI, MalformedIndexListIsAnErrorNotACrash) {
  Session session;
  std::string text =
      R"(func.func @f(%a: tensor<4x8xf32>, %i: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.reduce ins(%a : tensor<4x8xf32>) outs(%i : tensor<4xf32>) dimensions = [1,
    (%x: f32, %y: f32) { %s = arith.addf %x, %y : f32  linalg.yield %s : f32 }
  return %r : tensor<4xf32>
}
)";
  Output output(session, text, "reduce.mlir");
  EXPECT_FALSE(kiln_compiler_output_ok(output.output));
  EXPECT_NE(output.diagnostics().find("reduce.mlir:2:73: malformed index list"),
            std::string::npos)
      << output.diagnostics();
  // Comments and identifiers that merely contain the word are fine.
  Output fine(session, std::string("// dimensions of the sum\n") + kAdd,
              "add.mlir");
  EXPECT_TRUE(kiln_compiler_output_ok(fine.output)) << fine.diagnostics();
}

TEST(CompilerAPI, NullArgumentsAreDiagnosed) {
  Output noSession(Session({"--frobnicate"}), kAdd, "add.mlir");
  EXPECT_FALSE(kiln_compiler_output_ok(noSession.output));
  EXPECT_NE(noSession.diagnostics().find("the session is NULL"),
            std::string::npos);
  EXPECT_EQ(kiln_compiler_output_diagnostic(noSession.output, 99), nullptr);
  EXPECT_FALSE(kiln_compiler_output_ok(nullptr));
  EXPECT_EQ(kiln_compiler_output_diagnostic_count(nullptr), 0u);
  kiln_compiler_output_destroy(nullptr);
  kiln_compiler_session_destroy(nullptr);
}

// One session, four threads compiling at once (each compile has its own
// context; host codegen's in-process lld is serialized inside).
TEST(CompilerAPI, OneSessionCompilesOnManyThreads) {
  Session session({"--target=host"});
  ASSERT_NE(session.session, nullptr);
  std::vector<std::thread> threads;
  std::vector<std::vector<float>> results(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Output output(session, kAdd, "add.mlir");
      if (kiln_compiler_output_ok(output.output))
        results[t] = runAdd(output);
      else
        ADD_FAILURE() << output.diagnostics();
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const auto &result : results)
    EXPECT_EQ(result, (std::vector<float>{11, 22, 33, 44}));
}

} // namespace

// A compiled collective (a kernel over a symmetric window, the host target's
// default for small all_reduces) whose peer never calls: once that peer
// releases its module (and with it its window), the waiting rank's call
// fails at once with the kernel's status 4 instead of waiting out the
// kernel's 120 s bound.
// An all_reduce compiled to a kernel (the host target's default) and
// loaded on two local devices of one group; loading creates the windows.
class CompiledCollective : public ::testing::Test {
protected:
  void SetUp() override {
    const std::string program = R"(
shard.grid @grid(shape = 2)
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = shard.all_reduce %x on @grid grid_axes = [0] : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
)";
    Session s;
    ASSERT_NE(s.session, nullptr) << s.error;
    Output output(s, program, "allreduce.mlir");
    ASSERT_TRUE(kiln_compiler_output_ok(output.output)) << output.diagnostics();
    size_t size = 0;
    const void *bytes = kiln_compiler_output_module(output.output, &size);

    kiln_instance_options_t options = {};
    options.ignore_plugin_environment = true;
    ASSERT_EQ(kiln_instance_create(&options, &instance), nullptr);
    for (int r = 0; r < 2; ++r)
      ASSERT_EQ(kiln_device_create(instance,
                                   r == 0 ? "local://0" : "local://1",
                                   &devices[r]),
                nullptr);
    kiln_collective_group_params_t params = {2, 0, nullptr, 0};
    ASSERT_EQ(kiln_collective_group_create(devices, 2, &params, &group),
              nullptr);
    // Loading creates the windows: collective, one thread per rank.
    kiln_status_t loaded[2] = {nullptr, nullptr};
    {
      std::vector<std::thread> threads;
      for (int r = 0; r < 2; ++r)
        threads.emplace_back([&, r] {
          loaded[r] =
              kiln_module_load_memory(devices[r], bytes, size, &modules[r]);
        });
      for (std::thread &thread : threads)
        thread.join();
    }
    ASSERT_EQ(loaded[0], nullptr) << kiln_status_message(loaded[0]);
    ASSERT_EQ(loaded[1], nullptr) << kiln_status_message(loaded[1]);
    const int64_t shape[1] = {8};
    const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int r = 0; r < 2; ++r) {
      ASSERT_EQ(kiln_module_lookup_function(modules[r], "main", &functions[r]),
                nullptr);
      ASSERT_EQ(kiln_buffer_view_create_from_host(devices[r],
                                                  KILN_ELEMENT_TYPE_F32, 1,
                                                  shape, x, sizeof(x),
                                                  &inputs[r]),
                nullptr);
    }
  }

  void TearDown() override {
    for (int r = 0; r < 2; ++r) {
      kiln_buffer_view_release(inputs[r]);
      kiln_module_release(modules[r]);
    }
    kiln_collective_group_release(group);
    for (int r = 0; r < 2; ++r)
      kiln_device_release(devices[r]);
    kiln_instance_release(instance);
  }

  // Calls rank 0's function while `peer` runs; returns the call's status
  // message ("" on success) and its seconds.
  std::pair<std::string, double> callRankZeroWhile(std::function<void()> peer) {
    kiln_buffer_view_t *out = nullptr;
    kiln_status_t called = nullptr;
    auto begin = std::chrono::steady_clock::now();
    std::thread caller([&] {
      called = kiln_function_call(functions[0], 1, &inputs[0], 1, &out);
    });
    peer();
    caller.join();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
            .count();
    std::string message = called ? kiln_status_message(called) : "";
    kiln_status_free(called);
    kiln_buffer_view_release(out);
    return {message, seconds};
  }

  kiln_instance_t *instance = nullptr;
  kiln_device_t *devices[2] = {nullptr, nullptr};
  kiln_collective_group_t *group = nullptr;
  kiln_module_t *modules[2] = {nullptr, nullptr};
  kiln_function_t *functions[2] = {nullptr, nullptr};
  kiln_buffer_view_t *inputs[2] = {nullptr, nullptr};
};

TEST_F(CompiledCollective, EndsWhenAPeerLeaves) {
  auto [message, seconds] = callRankZeroWhile([&] {
    // Rank 1 never calls; it leaves.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kiln_module_release(modules[1]);
    modules[1] = nullptr;
  });
  ASSERT_NE(message, "") << "the call should fail: its peer left";
  EXPECT_NE(message.find("failed with code 4"), std::string::npos) << message;
  EXPECT_LT(seconds, 30.0) << message;
}

// A rank whose submission fails never runs its part of the call: its device
// aborts the group's windows, so the peer's kernel ends at once instead of
// waiting out its 120 s bound, and later calls of the group fail alike.
TEST_F(CompiledCollective, EndsWhenAPeersSubmissionFails) {
  kiln_fence_t *wait = nullptr, *done = nullptr;
  ASSERT_EQ(kiln_fence_create(devices[1], &wait), nullptr);
  ASSERT_EQ(kiln_fence_create(devices[1], &done), nullptr);
  kiln_buffer_view_t *peerOut = nullptr;
  auto [message, seconds] = callRankZeroWhile([&] {
    // Rank 1's call waits for a fence that fails: it fails without running.
    ASSERT_EQ(kiln_function_call_async(functions[1], 1, &inputs[1], wait, done,
                                       1, &peerOut),
              nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kiln_status_t why = kiln_make_status(KILN_STATUS_ABORTED, "test: the "
                                         "input of rank 1 never came");
    kiln_fence_fail(wait, why);
    kiln_status_free(why);
  });
  ASSERT_NE(message, "") << "the call should fail: its peer's failed";
  EXPECT_NE(message.find("failed with code 4"), std::string::npos) << message;
  EXPECT_LT(seconds, 30.0) << message;
  kiln_status_t peer = kiln_fence_wait(done, INT64_MAX);
  ASSERT_NE(peer, nullptr);
  EXPECT_NE(std::string(kiln_status_message(peer)).find("never came"),
            std::string::npos)
      << kiln_status_message(peer);
  kiln_status_free(peer);
  // The group stays aborted: the next call fails at once.
  auto [again, againSeconds] = callRankZeroWhile([] {});
  EXPECT_NE(again.find("failed with code 4"), std::string::npos) << again;
  EXPECT_LT(againSeconds, 5.0) << again;
  kiln_buffer_view_release(peerOut);
  kiln_fence_release(wait);
  kiln_fence_release(done);
}
