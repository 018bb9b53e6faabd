//===- HostTargetTest.cpp - Host kernels compiled, loaded and run ---------===//
//
// Each test parses a kiln.executable from MLIR text, compiles it with
// compileExecutableForHost, dlopens the shared object and calls the export
// for every workgroup exactly as the local driver does (host_abi.h, several
// threads at once), then compares the result bindings with a C++ reference.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Target/Host/HostTarget.h"
#include "kiln/host_abi.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace mlir;
using namespace mlir::kiln;

namespace {

// A loaded shared object; unloaded and deleted on destruction.
class LoadedKernelLibrary {
public:
  explicit LoadedKernelLibrary(const std::vector<uint8_t> &bytes) {
    llvm::SmallString<128> path;
    int fd;
    if (llvm::sys::fs::createTemporaryFile("kiln-test", "so", fd, path))
      return;
    {
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    }
    this->path = path.str().str();
    handle = dlopen(this->path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      error = dlerror();
  }
  ~LoadedKernelLibrary() {
    if (handle)
      dlclose(handle);
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
  kiln_host_kernel_fn_t lookup(const std::string &name) const {
    return handle ? reinterpret_cast<kiln_host_kernel_fn_t>(
                        dlsym(handle, name.c_str()))
                  : nullptr;
  }
  void *handle = nullptr;
  std::string path;
  std::string error;
};

class HostTargetTest : public ::testing::Test {
protected:
  HostTargetTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllExtensions(registry);
    registry.insert<KilnDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  // Compiles the single kiln.executable in `source`; failures go to
  // `diagnostics`.
  FailureOr<HostExecutableBinary> compile(const std::string &source) {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      llvm::raw_string_ostream os(diagnostics);
      os << diag.getLocation() << ": " << diag << "\n";
      return success();
    });
    module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return failure();
    auto executables = llvm::to_vector(module->getOps<ExecutableOp>());
    if (executables.size() != 1) {
      diagnostics += "expected one kiln.executable\n";
      return failure();
    }
    HostTargetOptions options;
    options.vectorWidth = vectorWidth;
    if (const char *dir = std::getenv("KILN_TEST_DUMP_DIR"))
      options.dumpDir = dir;
    return compileExecutableForHost(executables.front(), options);
  }

  // Compiles `source` and runs its single kernel over `bindings` (inputs,
  // then outputs), with all workgroups spread over several threads.
  void run(const std::string &source,
           const std::vector<std::vector<uint8_t> *> &bindings) {
    FailureOr<HostExecutableBinary> binary = compile(source);
    ASSERT_TRUE(succeeded(binary)) << diagnostics;
    ASSERT_EQ(binary->exports.size(), 1u);
    const HostKernelExport &kernel = binary->exports.front();
    ASSERT_EQ(kernel.bindingCount, bindings.size());
    lastExport = kernel;

    LoadedKernelLibrary library(binary->sharedObject);
    ASSERT_NE(library.handle, nullptr) << library.error;
    kiln_host_kernel_fn_t fn = library.lookup(kernel.name);
    ASSERT_NE(fn, nullptr) << "missing export " << kernel.name;

    std::vector<void *> pointers;
    std::vector<uint64_t> lengths;
    for (std::vector<uint8_t> *binding : bindings) {
      pointers.push_back(binding->data());
      lengths.push_back(binding->size());
    }
    kiln_host_dispatch_state_t state = {};
    state.bindings = pointers.data();
    state.binding_lengths = lengths.data();
    state.binding_count = static_cast<uint32_t>(bindings.size());
    for (int i = 0; i < 3; ++i)
      state.workgroup_count[i] = kernel.workgroupCount[i];

    const uint32_t total = kernel.workgroupCount[0] *
                           kernel.workgroupCount[1] * kernel.workgroupCount[2];
    std::atomic<uint32_t> next{0};
    std::atomic<int> failures{0};
    auto worker = [&] {
      for (uint32_t i = next++; i < total; i = next++) {
        // Walk the grid backwards: kernels must not depend on order.
        uint32_t id = total - 1 - i;
        uint32_t x = id % kernel.workgroupCount[0];
        uint32_t y = (id / kernel.workgroupCount[0]) % kernel.workgroupCount[1];
        uint32_t z = id / (kernel.workgroupCount[0] * kernel.workgroupCount[1]);
        if (fn(&state, x, y, z) != 0)
          ++failures;
      }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back(worker);
    for (std::thread &t : threads)
      t.join();
    EXPECT_EQ(failures.load(), 0);
  }

  MLIRContext context{MLIRContext::Threading::DISABLED};
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
  HostKernelExport lastExport;
  // SIMD register bits kernels are vectorized for (-1: from the CPU). Any
  // width runs on any x86-64: LLVM splits vectors wider than the registers.
  int64_t vectorWidth = -1;
};

template <typename T>
std::vector<uint8_t> toBytes(const std::vector<T> &values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> fromBytes(const std::vector<uint8_t> &bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

std::vector<float> randomFloats(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

// Output binding filled with a poison pattern, so unwritten elements show.
std::vector<uint8_t> outputBytes(size_t size) {
  return std::vector<uint8_t>(size, 0xA5);
}

void expectNear(const std::vector<float> &actual,
                const std::vector<float> &expected, float tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i],
                tolerance * std::max(1.0f, std::fabs(expected[i])))
        << "at element " << i;
}

// 16-bit float helpers through APFloat (round to nearest even).
uint16_t toSmallFloat(float value, const llvm::fltSemantics &sem) {
  llvm::APFloat f(value);
  bool losesInfo;
  f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
}
float fromSmallFloat(uint16_t bits, const llvm::fltSemantics &sem) {
  llvm::APFloat f(sem, llvm::APInt(16, bits));
  bool losesInfo;
  f.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return f.convertToFloat();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST_F(HostTargetTest, AddF32) {
  const char *source = R"mlir(
kiln.executable @add {
  func.func @add(%a: tensor<64x128xf32>, %b: tensor<64x128xf32>) -> tensor<64x128xf32> {
    %e = tensor.empty() : tensor<64x128xf32>
    %r = linalg.add ins(%a, %b : tensor<64x128xf32>, tensor<64x128xf32>)
                    outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
    return %r : tensor<64x128xf32>
  }
}
)mlir";
  std::vector<float> a = randomFloats(64 * 128, -1, 1, 1);
  std::vector<float> b = randomFloats(64 * 128, -1, 1, 2);
  auto ba = toBytes(a), bb = toBytes(b);
  auto out = outputBytes(64 * 128 * 4);
  run(source, {&ba, &bb, &out});
  std::vector<float> expected(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    expected[i] = a[i] + b[i];
  expectNear(fromBytes<float>(out), expected, 0);
  // Big enough to be split into several workgroups.
  EXPECT_GT(lastExport.workgroupCount[0] * lastExport.workgroupCount[1], 1u);
}

TEST_F(HostTargetTest, IntegerOpsI32) {
  const char *source = R"mlir(
#map = affine_map<(d0) -> (d0)>
kiln.executable @iops {
  func.func @iops(%a: tensor<1000xi32>, %b: tensor<1000xi32>) -> tensor<1000xi32> {
    %e = tensor.empty() : tensor<1000xi32>
    %r = linalg.generic {indexing_maps = [#map, #map, #map],
                         iterator_types = ["parallel"]}
        ins(%a, %b : tensor<1000xi32>, tensor<1000xi32>) outs(%e : tensor<1000xi32>) {
    ^bb0(%x: i32, %y: i32, %o: i32):
      %c3 = arith.constant 3 : i32
      %c2 = arith.constant 2 : i32
      %m = arith.muli %x, %y : i32
      %s = arith.addi %m, %c3 : i32
      %d = arith.divsi %s, %c2 : i32
      %mx = arith.maxsi %d, %x : i32
      %sh = arith.shli %mx, %c2 : i32
      %x2 = arith.xori %sh, %y : i32
      linalg.yield %x2 : i32
    } -> tensor<1000xi32>
    return %r : tensor<1000xi32>
  }
}
)mlir";
  std::mt19937 rng(3);
  std::uniform_int_distribution<int32_t> dist(-1000, 1000);
  std::vector<int32_t> a(1000), b(1000);
  for (int i = 0; i < 1000; ++i) {
    a[i] = dist(rng);
    b[i] = dist(rng);
  }
  auto ba = toBytes(a), bb = toBytes(b);
  auto out = outputBytes(1000 * 4);
  run(source, {&ba, &bb, &out});
  std::vector<int32_t> result = fromBytes<int32_t>(out);
  for (int i = 0; i < 1000; ++i) {
    int32_t d = (a[i] * b[i] + 3) / 2;
    int32_t mx = std::max(d, a[i]);
    int32_t expected = static_cast<int32_t>(static_cast<uint32_t>(mx) << 2) ^ b[i];
    ASSERT_EQ(result[i], expected) << "at element " << i;
  }
}

// out = a * b + c, each op rounded to f16 (as the IR says).
TEST_F(HostTargetTest, ElementwiseF16) {
  const char *source = R"mlir(
#map = affine_map<(d0, d1) -> (d0, d1)>
kiln.executable @f16 {
  func.func @f16(%a: tensor<16x64xf16>, %b: tensor<16x64xf16>, %c: tensor<16x64xf16>) -> tensor<16x64xf16> {
    %e = tensor.empty() : tensor<16x64xf16>
    %r = linalg.generic {indexing_maps = [#map, #map, #map, #map],
                         iterator_types = ["parallel", "parallel"]}
        ins(%a, %b, %c : tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>)
        outs(%e : tensor<16x64xf16>) {
    ^bb0(%x: f16, %y: f16, %z: f16, %o: f16):
      %m = arith.mulf %x, %y : f16
      %s = arith.addf %m, %z : f16
      linalg.yield %s : f16
    } -> tensor<16x64xf16>
    return %r : tensor<16x64xf16>
  }
}
)mlir";
  const llvm::fltSemantics &half = llvm::APFloat::IEEEhalf();
  size_t n = 16 * 64;
  std::vector<float> fa = randomFloats(n, -300, 300, 4);
  std::vector<float> fb = randomFloats(n, -300, 300, 5);
  std::vector<float> fc = randomFloats(n, -1e-3f, 1e-3f, 6);
  // Special values: overflow to inf, subnormal results, NaN.
  fa[0] = 60000;
  fb[0] = 2;
  fa[1] = 1e-4f;
  fb[1] = 1e-3f;
  fc[1] = 0;
  fa[2] = NAN;
  std::vector<uint16_t> ha(n), hb(n), hc(n);
  for (size_t i = 0; i < n; ++i) {
    ha[i] = toSmallFloat(fa[i], half);
    hb[i] = toSmallFloat(fb[i], half);
    hc[i] = toSmallFloat(fc[i], half);
  }
  auto ba = toBytes(ha), bb = toBytes(hb), bc = toBytes(hc);
  auto out = outputBytes(n * 2);
  run(source, {&ba, &bb, &bc, &out});
  std::vector<uint16_t> result = fromBytes<uint16_t>(out);
  for (size_t i = 0; i < n; ++i) {
    float m = fromSmallFloat(
        toSmallFloat(fromSmallFloat(ha[i], half) * fromSmallFloat(hb[i], half),
                     half),
        half);
    uint16_t expected = toSmallFloat(m + fromSmallFloat(hc[i], half), half);
    if (std::isnan(fromSmallFloat(expected, half))) {
      ASSERT_TRUE(std::isnan(fromSmallFloat(result[i], half))) << i;
      continue;
    }
    ASSERT_EQ(result[i], expected) << "at element " << i;
  }
}

TEST_F(HostTargetTest, ElementwiseBF16) {
  const char *source = R"mlir(
#map = affine_map<(d0) -> (d0)>
kiln.executable @bf16 {
  func.func @bf16(%a: tensor<512xbf16>, %b: tensor<512xbf16>) -> tensor<512xbf16> {
    %e = tensor.empty() : tensor<512xbf16>
    %r = linalg.generic {indexing_maps = [#map, #map, #map],
                         iterator_types = ["parallel"]}
        ins(%a, %b : tensor<512xbf16>, tensor<512xbf16>) outs(%e : tensor<512xbf16>) {
    ^bb0(%x: bf16, %y: bf16, %o: bf16):
      %m = arith.mulf %x, %y : bf16
      %s = arith.subf %m, %y : bf16
      linalg.yield %s : bf16
    } -> tensor<512xbf16>
    return %r : tensor<512xbf16>
  }
}
)mlir";
  const llvm::fltSemantics &bf = llvm::APFloat::BFloat();
  size_t n = 512;
  std::vector<float> fa = randomFloats(n, -1e3f, 1e3f, 7);
  std::vector<float> fb = randomFloats(n, -1e3f, 1e3f, 8);
  std::vector<uint16_t> ha(n), hb(n);
  for (size_t i = 0; i < n; ++i) {
    ha[i] = toSmallFloat(fa[i], bf);
    hb[i] = toSmallFloat(fb[i], bf);
  }
  auto ba = toBytes(ha), bb = toBytes(hb);
  auto out = outputBytes(n * 2);
  run(source, {&ba, &bb, &out});
  std::vector<uint16_t> result = fromBytes<uint16_t>(out);
  for (size_t i = 0; i < n; ++i) {
    float x = fromSmallFloat(ha[i], bf), y = fromSmallFloat(hb[i], bf);
    float m = fromSmallFloat(toSmallFloat(x * y, bf), bf);
    ASSERT_EQ(result[i], toSmallFloat(m - y, bf)) << "at element " << i;
  }
}

TEST_F(HostTargetTest, CompareSelectI1) {
  const char *source = R"mlir(
#map = affine_map<(d0) -> (d0)>
kiln.executable @cmpsel {
  func.func @cmpsel(%a: tensor<300xf32>, %b: tensor<300xf32>) -> tensor<300xi1> {
    %e = tensor.empty() : tensor<300xi1>
    %c = linalg.generic {indexing_maps = [#map, #map, #map],
                         iterator_types = ["parallel"]}
        ins(%a, %b : tensor<300xf32>, tensor<300xf32>) outs(%e : tensor<300xi1>) {
    ^bb0(%x: f32, %y: f32, %o: i1):
      %gt = arith.cmpf ogt, %x, %y : f32
      linalg.yield %gt : i1
    } -> tensor<300xi1>
    %e2 = tensor.empty() : tensor<300xi1>
    %r = linalg.generic {indexing_maps = [#map, #map, #map],
                         iterator_types = ["parallel"]}
        ins(%c, %a : tensor<300xi1>, tensor<300xf32>) outs(%e2 : tensor<300xi1>) {
    ^bb0(%p: i1, %x: f32, %o: i1):
      %zero = arith.constant 0.0 : f32
      %true = arith.constant true
      %neg = arith.cmpf olt, %x, %zero : f32
      %s = arith.select %p, %neg, %true : i1
      linalg.yield %s : i1
    } -> tensor<300xi1>
    return %r : tensor<300xi1>
  }
}
)mlir";
  std::vector<float> a = randomFloats(300, -1, 1, 9);
  std::vector<float> b = randomFloats(300, -1, 1, 10);
  auto ba = toBytes(a), bb = toBytes(b);
  auto out = outputBytes(300);
  run(source, {&ba, &bb, &out});
  for (size_t i = 0; i < 300; ++i) {
    bool expected = a[i] > b[i] ? a[i] < 0 : true;
    ASSERT_EQ(out[i], expected ? 1 : 0) << "at element " << i;
  }
}

//===----------------------------------------------------------------------===//
// Reductions, contractions, convolutions
//===----------------------------------------------------------------------===//

TEST_F(HostTargetTest, ReduceInnermost) {
  const char *source = R"mlir(
kiln.executable @rsum {
  func.func @rsum(%a: tensor<128x100xf32>) -> tensor<128xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<128xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128xf32>) -> tensor<128xf32>
    %r = linalg.reduce ins(%a : tensor<128x100xf32>) outs(%f : tensor<128xf32>) dimensions = [1]
      (%x: f32, %acc: f32) {
        %s = arith.addf %x, %acc : f32
        linalg.yield %s : f32
      }
    return %r : tensor<128xf32>
  }
}
)mlir";
  std::vector<float> a = randomFloats(128 * 100, -1, 1, 11);
  auto ba = toBytes(a);
  auto out = outputBytes(128 * 4);
  run(source, {&ba, &out});
  std::vector<float> expected(128, 0);
  for (int i = 0; i < 128; ++i)
    for (int j = 0; j < 100; ++j)
      expected[i] += a[i * 100 + j];
  expectNear(fromBytes<float>(out), expected, 1e-4f);
  EXPECT_GT(lastExport.workgroupCount[0], 1u);
}

TEST_F(HostTargetTest, MatmulBiasRelu) {
  const char *source = R"mlir(
#mapmn = affine_map<(d0, d1) -> (d0, d1)>
#mapn = affine_map<(d0, d1) -> (d1)>
kiln.executable @mlp {
  func.func @mlp(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>, %bias: tensor<48xf32>) -> tensor<64x48xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<64x48xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
    %mm = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>)
                        outs(%f : tensor<64x48xf32>) -> tensor<64x48xf32>
    %r = linalg.generic {indexing_maps = [#mapmn, #mapn, #mapmn],
                         iterator_types = ["parallel", "parallel"]}
        ins(%mm, %bias : tensor<64x48xf32>, tensor<48xf32>) outs(%e : tensor<64x48xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      %m = arith.maximumf %s, %zero : f32
      linalg.yield %m : f32
    } -> tensor<64x48xf32>
    return %r : tensor<64x48xf32>
  }
}
)mlir";
  std::vector<float> a = randomFloats(64 * 32, -1, 1, 12);
  std::vector<float> b = randomFloats(32 * 48, -1, 1, 13);
  std::vector<float> bias = randomFloats(48, -1, 1, 14);
  auto ba = toBytes(a), bb = toBytes(b), bbias = toBytes(bias);
  auto out = outputBytes(64 * 48 * 4);
  run(source, {&ba, &bb, &bbias, &out});
  std::vector<float> expected(64 * 48);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 48; ++j) {
      float acc = 0;
      for (int k = 0; k < 32; ++k)
        acc += a[i * 32 + k] * b[k * 48 + j];
      expected[i * 48 + j] = std::max(acc + bias[j], 0.0f);
    }
  expectNear(fromBytes<float>(out), expected, 1e-4f);
  EXPECT_GT(lastExport.workgroupCount[0] * lastExport.workgroupCount[1], 1u);
}

// Sizes that are multiples of no register tile: the register tile loops are
// peeled, partial workgroup tiles stay scalar. Every vector width gives the
// same result (up to rounding of the K sums, which all run in order).
TEST_F(HostTargetTest, VectorizedMatmulOddSizes) {
  const char *source = R"mlir(
kiln.executable @mm {
  func.func @mm(%a: tensor<67x45xf32>, %b: tensor<45x53xf32>) -> tensor<67x53xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<67x53xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<67x53xf32>) -> tensor<67x53xf32>
    %r = linalg.matmul ins(%a, %b : tensor<67x45xf32>, tensor<45x53xf32>)
                       outs(%f : tensor<67x53xf32>) -> tensor<67x53xf32>
    return %r : tensor<67x53xf32>
  }
}
)mlir";
  std::vector<float> a = randomFloats(67 * 45, -1, 1, 30);
  std::vector<float> b = randomFloats(45 * 53, -1, 1, 31);
  std::vector<float> expected(67 * 53);
  for (int i = 0; i < 67; ++i)
    for (int j = 0; j < 53; ++j) {
      float acc = 0;
      for (int k = 0; k < 45; ++k)
        acc += a[i * 45 + k] * b[k * 53 + j];
      expected[i * 53 + j] = acc;
    }
  for (int64_t width : {0, 128, 256, 512}) {
    SCOPED_TRACE("vector width " + std::to_string(width));
    vectorWidth = width;
    auto ba = toBytes(a), bb = toBytes(b);
    auto out = outputBytes(67 * 53 * 4);
    run(source, {&ba, &bb, &out});
    expectNear(fromBytes<float>(out), expected, 1e-5f);
  }
}

// Integer contraction with a wider accumulator (i8 x i8 -> i32): exact.
TEST_F(HostTargetTest, VectorizedMatmulI8I32) {
  const char *source = R"mlir(
#ma = affine_map<(m, n, k) -> (m, k)>
#mb = affine_map<(m, n, k) -> (k, n)>
#mc = affine_map<(m, n, k) -> (m, n)>
kiln.executable @mmi {
  func.func @mmi(%a: tensor<33x19xi8>, %b: tensor<19x41xi8>) -> tensor<33x41xi32> {
    %zero = arith.constant 0 : i32
    %e = tensor.empty() : tensor<33x41xi32>
    %f = linalg.fill ins(%zero : i32) outs(%e : tensor<33x41xi32>) -> tensor<33x41xi32>
    %r = linalg.generic {indexing_maps = [#ma, #mb, #mc],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<33x19xi8>, tensor<19x41xi8>) outs(%f : tensor<33x41xi32>) {
    ^bb0(%x: i8, %y: i8, %acc: i32):
      %xe = arith.extsi %x : i8 to i32
      %ye = arith.extsi %y : i8 to i32
      %p = arith.muli %xe, %ye : i32
      %s = arith.addi %acc, %p : i32
      linalg.yield %s : i32
    } -> tensor<33x41xi32>
    return %r : tensor<33x41xi32>
  }
}
)mlir";
  std::mt19937 rng(32);
  std::vector<int8_t> a(33 * 19), b(19 * 41);
  for (int8_t &x : a)
    x = static_cast<int8_t>(rng() % 256);
  for (int8_t &x : b)
    x = static_cast<int8_t>(rng() % 256);
  std::vector<int32_t> expected(33 * 41, 0);
  for (int i = 0; i < 33; ++i)
    for (int j = 0; j < 41; ++j)
      for (int k = 0; k < 19; ++k)
        expected[i * 41 + j] += int32_t(a[i * 19 + k]) * int32_t(b[k * 41 + j]);
  for (int64_t width : {128, 512}) {
    SCOPED_TRACE("vector width " + std::to_string(width));
    vectorWidth = width;
    auto ba = toBytes(a), bb = toBytes(b);
    auto out = outputBytes(33 * 41 * 4);
    run(source, {&ba, &bb, &out});
    EXPECT_EQ(fromBytes<int32_t>(out), expected);
  }
}

// An elementwise chain with a broadcast operand, 131x77: the innermost loop
// is a multiple of no vector width; the chain's temporaries are vectorized
// too.
TEST_F(HostTargetTest, VectorizedElementwiseOddSizes) {
  const char *source = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
kiln.executable @ew {
  func.func @ew(%a: tensor<131x77xf32>, %b: tensor<77xf32>, %c: tensor<131x77xf32>) -> tensor<131x77xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<131x77xf32>
    %s = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a, %b : tensor<131x77xf32>, tensor<77xf32>) outs(%e : tensor<131x77xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %v = arith.addf %x, %y : f32
      linalg.yield %v : f32
    } -> tensor<131x77xf32>
    %m = linalg.mul ins(%s, %c : tensor<131x77xf32>, tensor<131x77xf32>)
                    outs(%e : tensor<131x77xf32>) -> tensor<131x77xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%m : tensor<131x77xf32>) outs(%e : tensor<131x77xf32>) {
    ^bb0(%x: f32, %o: f32):
      %v = arith.maximumf %x, %zero : f32
      linalg.yield %v : f32
    } -> tensor<131x77xf32>
    return %r : tensor<131x77xf32>
  }
}
)mlir";
  std::vector<float> a = randomFloats(131 * 77, -2, 2, 33);
  std::vector<float> b = randomFloats(77, -2, 2, 34);
  std::vector<float> c = randomFloats(131 * 77, -2, 2, 35);
  std::vector<float> expected(131 * 77);
  for (int i = 0; i < 131; ++i)
    for (int j = 0; j < 77; ++j)
      expected[i * 77 + j] =
          std::max((a[i * 77 + j] + b[j]) * c[i * 77 + j], 0.0f);
  for (int64_t width : {128, 256, 512}) {
    SCOPED_TRACE("vector width " + std::to_string(width));
    vectorWidth = width;
    auto ba = toBytes(a), bb = toBytes(b), bc = toBytes(c);
    auto out = outputBytes(131 * 77 * 4);
    run(source, {&ba, &bb, &bc, &out});
    expectNear(fromBytes<float>(out), expected, 0);
  }
}

// Row sums of 45x1001 (reduction along the innermost loop, vectorized as a
// multi_reduction into a hoisted accumulator) and column sums (the parallel
// innermost loop is vectorized, the reduction loop stays a loop).
TEST_F(HostTargetTest, VectorizedReductionsOddSizes) {
  const char *source = R"mlir(
kiln.executable @sums {
  func.func @sums(%a: tensor<45x1001xf32>) -> tensor<45xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<45xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<45xf32>) -> tensor<45xf32>
    %r = linalg.reduce ins(%a : tensor<45x1001xf32>) outs(%f : tensor<45xf32>) dimensions = [1]
      (%x: f32, %acc: f32) {
        %s = arith.addf %x, %acc : f32
        linalg.yield %s : f32
      }
    return %r : tensor<45xf32>
  }
}
)mlir";
  const char *columns = R"mlir(
kiln.executable @colsums {
  func.func @colsums(%a: tensor<45x1001xf32>) -> tensor<1001xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1001xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1001xf32>) -> tensor<1001xf32>
    %r = linalg.reduce ins(%a : tensor<45x1001xf32>) outs(%f : tensor<1001xf32>) dimensions = [0]
      (%x: f32, %acc: f32) {
        %s = arith.addf %x, %acc : f32
        linalg.yield %s : f32
      }
    return %r : tensor<1001xf32>
  }
}
)mlir";
  std::vector<float> a = randomFloats(45 * 1001, -1, 1, 36);
  std::vector<float> rows(45, 0), cols(1001, 0);
  for (int i = 0; i < 45; ++i)
    for (int j = 0; j < 1001; ++j) {
      rows[i] += a[i * 1001 + j];
      cols[j] += a[i * 1001 + j];
    }
  for (int64_t width : {128, 256}) {
    SCOPED_TRACE("vector width " + std::to_string(width));
    vectorWidth = width;
    auto ba = toBytes(a);
    auto outRows = outputBytes(45 * 4), outCols = outputBytes(1001 * 4);
    run(source, {&ba, &outRows});
    expectNear(fromBytes<float>(outRows), rows, 1e-4f);
    run(columns, {&ba, &outCols});
    expectNear(fromBytes<float>(outCols), cols, 1e-5f);
  }
}

TEST_F(HostTargetTest, Conv2DNhwcHwcf) {
  const char *source = R"mlir(
kiln.executable @conv {
  func.func @conv(%in: tensor<2x10x10x3xf32>, %w: tensor<3x3x3x8xf32>) -> tensor<2x8x8x8xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x8x8x8xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
    %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%in, %w : tensor<2x10x10x3xf32>, tensor<3x3x3x8xf32>)
        outs(%f : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
    return %r : tensor<2x8x8x8xf32>
  }
}
)mlir";
  std::vector<float> in = randomFloats(2 * 10 * 10 * 3, -1, 1, 15);
  std::vector<float> w = randomFloats(3 * 3 * 3 * 8, -1, 1, 16);
  auto bin = toBytes(in), bw = toBytes(w);
  auto out = outputBytes(2 * 8 * 8 * 8 * 4);
  run(source, {&bin, &bw, &out});
  std::vector<float> expected(2 * 8 * 8 * 8, 0);
  for (int n = 0; n < 2; ++n)
    for (int oh = 0; oh < 8; ++oh)
      for (int ow = 0; ow < 8; ++ow)
        for (int f = 0; f < 8; ++f) {
          float acc = 0;
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw)
              for (int c = 0; c < 3; ++c)
                acc += in[((n * 10 + oh + kh) * 10 + ow + kw) * 3 + c] *
                       w[((kh * 3 + kw) * 3 + c) * 8 + f];
          expected[((n * 8 + oh) * 8 + ow) * 8 + f] = acc;
        }
  expectNear(fromBytes<float>(out), expected, 1e-4f);
}

TEST_F(HostTargetTest, Softmax) {
  const char *source = R"mlir(
#map2 = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
kiln.executable @softmax {
  func.func @softmax(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<32xf32>
    %e2 = tensor.empty() : tensor<32x64xf32>
    %mi = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<32xf32>) -> tensor<32xf32>
    %max = linalg.generic {indexing_maps = [#map2, #map1], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<32x64xf32>) outs(%mi : tensor<32xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %m = arith.maximumf %a, %acc : f32
      linalg.yield %m : f32
    } -> tensor<32xf32>
    %ex = linalg.generic {indexing_maps = [#map2, #map1, #map2], iterator_types = ["parallel", "parallel"]}
        ins(%x, %max : tensor<32x64xf32>, tensor<32xf32>) outs(%e2 : tensor<32x64xf32>) {
    ^bb0(%a: f32, %m: f32, %o: f32):
      %s = arith.subf %a, %m : f32
      %v = math.exp %s : f32
      linalg.yield %v : f32
    } -> tensor<32x64xf32>
    %si = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32xf32>) -> tensor<32xf32>
    %sum = linalg.generic {indexing_maps = [#map2, #map1], iterator_types = ["parallel", "reduction"]}
        ins(%ex : tensor<32x64xf32>) outs(%si : tensor<32xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    } -> tensor<32xf32>
    %r = linalg.generic {indexing_maps = [#map2, #map1, #map2], iterator_types = ["parallel", "parallel"]}
        ins(%ex, %sum : tensor<32x64xf32>, tensor<32xf32>) outs(%e2 : tensor<32x64xf32>) {
    ^bb0(%a: f32, %s: f32, %o: f32):
      %d = arith.divf %a, %s : f32
      linalg.yield %d : f32
    } -> tensor<32x64xf32>
    return %r : tensor<32x64xf32>
  }
}
)mlir";
  std::vector<float> x = randomFloats(32 * 64, -5, 5, 17);
  auto bx = toBytes(x);
  auto out = outputBytes(32 * 64 * 4);
  run(source, {&bx, &out});
  std::vector<float> expected(32 * 64);
  for (int i = 0; i < 32; ++i) {
    float m = -INFINITY, s = 0;
    for (int j = 0; j < 64; ++j)
      m = std::max(m, x[i * 64 + j]);
    for (int j = 0; j < 64; ++j)
      s += std::exp(x[i * 64 + j] - m);
    for (int j = 0; j < 64; ++j)
      expected[i * 64 + j] = std::exp(x[i * 64 + j] - m) / s;
  }
  expectNear(fromBytes<float>(out), expected, 1e-5f);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST_F(HostTargetTest, Transpose) {
  const char *source = R"mlir(
kiln.executable @transpose {
  func.func @transpose(%a: tensor<96x80xi16>) -> tensor<80x96xi16> {
    %e = tensor.empty() : tensor<80x96xi16>
    %r = linalg.transpose ins(%a : tensor<96x80xi16>) outs(%e : tensor<80x96xi16>) permutation = [1, 0]
    return %r : tensor<80x96xi16>
  }
}
)mlir";
  std::vector<int16_t> a(96 * 80);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<int16_t>(i * 7 - 3000);
  auto ba = toBytes(a);
  auto out = outputBytes(96 * 80 * 2);
  run(source, {&ba, &out});
  std::vector<int16_t> result = fromBytes<int16_t>(out);
  for (int i = 0; i < 80; ++i)
    for (int j = 0; j < 96; ++j)
      ASSERT_EQ(result[i * 96 + j], a[j * 80 + i]) << i << "," << j;
}

TEST_F(HostTargetTest, Pad) {
  const char *source = R"mlir(
kiln.executable @pad {
  func.func @pad(%a: tensor<10x10xf64>) -> tensor<12x15xf64> {
    %cst = arith.constant 7.5 : f64
    %r = tensor.pad %a low[1, 2] high[1, 3] {
    ^bb0(%i: index, %j: index):
      tensor.yield %cst : f64
    } : tensor<10x10xf64> to tensor<12x15xf64>
    return %r : tensor<12x15xf64>
  }
}
)mlir";
  std::vector<double> a(100);
  for (int i = 0; i < 100; ++i)
    a[i] = i * 0.25;
  auto ba = toBytes(a);
  auto out = outputBytes(12 * 15 * 8);
  run(source, {&ba, &out});
  std::vector<double> result = fromBytes<double>(out);
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 15; ++j) {
      bool inside = i >= 1 && i < 11 && j >= 2 && j < 12;
      double expected = inside ? a[(i - 1) * 10 + (j - 2)] : 7.5;
      ASSERT_EQ(result[i * 15 + j], expected) << i << "," << j;
    }
}

// Big enough to be split into workgroups: the pad is tiled (each tile
// reads the part of the source it needs).
TEST_F(HostTargetTest, TiledPad) {
  const char *source = R"mlir(
kiln.executable @tpad {
  func.func @tpad(%a: tensor<300x200xf32>) -> tensor<302x203xf32> {
    %cst = arith.constant -1.0 : f32
    %r = tensor.pad %a low[2, 0] high[0, 3] {
    ^bb0(%i: index, %j: index):
      tensor.yield %cst : f32
    } : tensor<300x200xf32> to tensor<302x203xf32>
    return %r : tensor<302x203xf32>
  }
}
)mlir";
  std::vector<float> a = randomFloats(300 * 200, 0, 1, 19);
  auto ba = toBytes(a);
  auto out = outputBytes(302 * 203 * 4);
  run(source, {&ba, &out});
  EXPECT_GT(lastExport.workgroupCount[0] * lastExport.workgroupCount[1], 1u);
  std::vector<float> result = fromBytes<float>(out);
  for (int i = 0; i < 302; ++i)
    for (int j = 0; j < 203; ++j) {
      bool inside = i >= 2 && j < 200;
      float expected = inside ? a[(i - 2) * 200 + j] : -1.0f;
      ASSERT_EQ(result[i * 203 + j], expected) << i << "," << j;
    }
}

// 997 rows do not divide into equal tiles: the last workgroup gets a
// partial tile.
TEST_F(HostTargetTest, PartialTiles) {
  const char *source = R"mlir(
#map = affine_map<(d0, d1) -> (d0, d1)>
kiln.executable @partial {
  func.func @partial(%a: tensor<997x37xf32>) -> tensor<997x37xf32> {
    %e = tensor.empty() : tensor<997x37xf32>
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<997x37xf32>) outs(%e : tensor<997x37xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.mulf %x, %x : f32
      linalg.yield %y : f32
    } -> tensor<997x37xf32>
    return %r : tensor<997x37xf32>
  }
}
)mlir";
  std::vector<float> a = randomFloats(997 * 37, -3, 3, 20);
  auto ba = toBytes(a);
  auto out = outputBytes(997 * 37 * 4);
  run(source, {&ba, &out});
  EXPECT_GT(lastExport.workgroupCount[0], 1u);
  std::vector<float> expected(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    expected[i] = a[i] * a[i];
  expectNear(fromBytes<float>(out), expected, 0);
}

TEST_F(HostTargetTest, Concat) {
  const char *source = R"mlir(
kiln.executable @concat {
  func.func @concat(%a: tensor<8x4xi8>, %b: tensor<8x6xi8>) -> tensor<8x10xi8> {
    %r = tensor.concat dim(1) %a, %b : (tensor<8x4xi8>, tensor<8x6xi8>) -> tensor<8x10xi8>
    return %r : tensor<8x10xi8>
  }
}
)mlir";
  std::vector<int8_t> a(32), b(48);
  for (int i = 0; i < 32; ++i)
    a[i] = static_cast<int8_t>(i);
  for (int i = 0; i < 48; ++i)
    b[i] = static_cast<int8_t>(-i - 1);
  auto ba = toBytes(a), bb = toBytes(b);
  auto out = outputBytes(80);
  run(source, {&ba, &bb, &out});
  std::vector<int8_t> result = fromBytes<int8_t>(out);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 10; ++j)
      ASSERT_EQ(result[i * 10 + j], j < 4 ? a[i * 4 + j] : b[i * 6 + j - 4])
          << i << "," << j;
}

TEST_F(HostTargetTest, ExpTanh) {
  const char *source = R"mlir(
#map = affine_map<(d0) -> (d0)>
kiln.executable @exptanh {
  func.func @exptanh(%a: tensor<4096xf32>) -> tensor<4096xf32> {
    %e = tensor.empty() : tensor<4096xf32>
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%a : tensor<4096xf32>) outs(%e : tensor<4096xf32>) {
    ^bb0(%x: f32, %o: f32):
      %t = math.tanh %x : f32
      %ex = math.exp %t : f32
      linalg.yield %ex : f32
    } -> tensor<4096xf32>
    return %r : tensor<4096xf32>
  }
}
)mlir";
  std::vector<float> a = randomFloats(4096, -6, 6, 18);
  auto ba = toBytes(a);
  auto out = outputBytes(4096 * 4);
  run(source, {&ba, &out});
  std::vector<float> expected(4096);
  for (int i = 0; i < 4096; ++i)
    expected[i] = std::exp(std::tanh(a[i]));
  expectNear(fromBytes<float>(out), expected, 1e-5f);
}

TEST_F(HostTargetTest, ReturnArgument) {
  const char *source = R"mlir(
kiln.executable @copy {
  func.func @copy(%a: tensor<5x7xi64>) -> tensor<5x7xi64> {
    return %a : tensor<5x7xi64>
  }
}
)mlir";
  std::vector<int64_t> a(35);
  for (int i = 0; i < 35; ++i)
    a[i] = int64_t(1) << (i + 20);
  auto ba = toBytes(a);
  auto out = outputBytes(35 * 8);
  run(source, {&ba, &out});
  EXPECT_EQ(fromBytes<int64_t>(out), a);
}

//===----------------------------------------------------------------------===//
// Failures
//===----------------------------------------------------------------------===//

TEST_F(HostTargetTest, DynamicShapeIsADiagnostic) {
  const char *source = R"mlir(
kiln.executable @dyn {
  func.func @dyn(%a: tensor<?xf32>) -> tensor<?xf32> {
    return %a : tensor<?xf32>
  }
}
)mlir";
  EXPECT_TRUE(failed(compile(source)));
  EXPECT_NE(diagnostics.find("dynamic shapes are not supported"),
            std::string::npos)
      << diagnostics;
  // The diagnostic points at the kernel in the source.
  EXPECT_NE(diagnostics.find("loc(\"-\":3:"), std::string::npos)
      << diagnostics;
}

TEST_F(HostTargetTest, UnsupportedElementTypeIsADiagnostic) {
  const char *source = R"mlir(
kiln.executable @f8 {
  func.func @f8(%a: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
    return %a : tensor<4xf8E4M3FN>
  }
}
)mlir";
  EXPECT_TRUE(failed(compile(source)));
  EXPECT_NE(diagnostics.find("unsupported element type"), std::string::npos)
      << diagnostics;
}

} // namespace
