//===- GPUExpandF64MathTest.cpp - Accuracy of the f64 exp/log expansions --===//
//
// kiln-gpu-expand-f64-math replaces f64 math.exp / math.log by arithmetic
// for CUDA kernels (no libdevice). The same rewrite runs here on a host
// kernel: the kernel is expanded, compiled with compileExecutableForHost,
// dlopened and run over many inputs (random over the whole range, and the
// edge cases: zeros, subnormals, infinities, NaN, overflow and underflow
// boundaries), and each result is compared with the x87 extended-precision
// libm function (expl, logl), in ulps of the f64 result.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"
#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Target/Host/HostTarget.h"
#include "kiln/host_abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::kiln;

namespace {

constexpr int64_t kCount = 1 << 16;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Error of `actual` against the extended-precision `reference`, in units
// in the last place of the f64 nearest to `reference`. Exact agreement
// (including equal infinities and both NaN) is 0; a NaN / non-NaN or
// finite / infinite mismatch is infinite.
double ulpError(double actual, long double reference) {
  double rounded = static_cast<double>(reference);
  if (std::isnan(rounded) || std::isnan(actual))
    return std::isnan(rounded) && std::isnan(actual) ? 0 : kInf;
  if (std::isinf(rounded) || std::isinf(actual))
    return actual == rounded ? 0 : kInf;
  // ulp of the binade of the reference; the smallest subnormal below 2^-1022.
  int exponent = std::max(std::ilogb(rounded == 0 ? DBL_MIN : rounded),
                          std::numeric_limits<double>::min_exponent - 1);
  long double ulp = std::ldexp(1.0L, exponent - 52);
  return static_cast<double>(std::fabs(actual - reference) / ulp);
}

// Compiles `function` (exp or log) over tensor<kCount x f64> for the host
// after expanding the f64 math, runs it over `inputs` and returns the
// results.
class F64MathKernel {
public:
  explicit F64MathKernel(const std::string &function) {
    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllExtensions(registry);
    registry.insert<KilnDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    std::string tensor = "tensor<" + std::to_string(kCount) + "xf64>";
    source = R"mlir(
#map = affine_map<(d0) -> (d0)>
kiln.executable @k {
  func.func @k(%a: TENSOR) -> TENSOR {
    %e = tensor.empty() : TENSOR
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%a : TENSOR) outs(%e : TENSOR) {
    ^bb0(%x: f64, %o: f64):
      %y = math.FN %x : f64
      linalg.yield %y : f64
    } -> TENSOR
    return %r : TENSOR
  }
}
)mlir";
    for (size_t at; (at = source.find("TENSOR")) != std::string::npos;)
      source.replace(at, 6, tensor);
    source.replace(source.find("FN"), 2, function);
  }

  ~F64MathKernel() {
    if (handle)
      dlclose(handle);
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }

  // Parses, expands, compiles and loads the kernel; errors go to
  // `diagnostics`.
  bool build() {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      llvm::raw_string_ostream os(diagnostics);
      os << diag.getLocation() << ": " << diag << "\n";
      return success();
    });
    module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return false;
    ExecutableOp executable = *module->getOps<ExecutableOp>().begin();
    func::FuncOp func = *executable.getBody().getOps<func::FuncOp>().begin();
    PassManager pm(&context, func::FuncOp::getOperationName());
    pm.addPass(createGPUExpandF64MathPass());
    if (failed(pm.run(func)))
      return false;
    // The expansion must leave no f64 exp/log for the host's libm.
    bool remaining = false;
    func.walk([&](Operation *op) {
      remaining |= op->getName().getStringRef() == "math.exp" ||
                   op->getName().getStringRef() == "math.log";
    });
    if (remaining) {
      diagnostics += "math.exp/math.log left after the expansion\n";
      return false;
    }
    FailureOr<HostExecutableBinary> binary =
        compileExecutableForHost(executable, HostTargetOptions());
    if (failed(binary) || binary->exports.size() != 1)
      return false;
    kernel = binary->exports.front();

    int fd;
    llvm::SmallString<128> tmp;
    if (llvm::sys::fs::createTemporaryFile("kiln-f64-math", "so", fd, tmp))
      return false;
    {
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os.write(reinterpret_cast<const char *>(binary->sharedObject.data()),
               binary->sharedObject.size());
    }
    path = tmp.str().str();
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      diagnostics += dlerror();
      return false;
    }
    fn = reinterpret_cast<kiln_host_kernel_fn_t>(
        dlsym(handle, kernel.name.c_str()));
    return fn != nullptr;
  }

  std::vector<double> run(std::vector<double> inputs) {
    std::vector<double> outputs(inputs.size(), -1.0);
    void *pointers[] = {inputs.data(), outputs.data()};
    uint64_t lengths[] = {inputs.size() * 8, outputs.size() * 8};
    kiln_host_dispatch_state_t state = {};
    state.bindings = pointers;
    state.binding_lengths = lengths;
    state.binding_count = 2;
    for (int i = 0; i < 3; ++i)
      state.workgroup_count[i] = kernel.workgroupCount[i];
    for (uint32_t z = 0; z < kernel.workgroupCount[2]; ++z)
      for (uint32_t y = 0; y < kernel.workgroupCount[1]; ++y)
        for (uint32_t x = 0; x < kernel.workgroupCount[0]; ++x)
          EXPECT_EQ(fn(&state, x, y, z), 0);
    return outputs;
  }

  std::string diagnostics;

private:
  MLIRContext context{MLIRContext::Threading::DISABLED};
  OwningOpRef<ModuleOp> module;
  std::string source;
  HostKernelExport kernel;
  void *handle = nullptr;
  kiln_host_kernel_fn_t fn = nullptr;
  std::string path;
};

// Inputs: `edges` first, then uniform draws from [lo, hi] and random
// doubles of every binade in [lo, hi] (by bit pattern) up to kCount.
std::vector<double> makeInputs(std::vector<double> edges, double lo, double hi,
                               unsigned seed) {
  std::vector<double> inputs = std::move(edges);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(lo, hi);
  while (inputs.size() < kCount / 2)
    inputs.push_back(uniform(rng));
  uint64_t loBits = llvm::bit_cast<uint64_t>(std::max(lo, 0.0));
  uint64_t hiBits = llvm::bit_cast<uint64_t>(hi);
  std::uniform_int_distribution<uint64_t> bits(loBits, hiBits);
  while (inputs.size() < kCount) {
    double x = llvm::bit_cast<double>(bits(rng));
    inputs.push_back(lo < 0 && (inputs.size() & 1) ? -x : x);
  }
  return inputs;
}

// Checks every result against `reference` and that the worst is at most
// `maxUlp`; reports the worst input.
void expectAccurate(const std::vector<double> &inputs,
                    const std::vector<double> &outputs,
                    long double (*reference)(long double), double maxUlp) {
  double worst = 0;
  size_t worstAt = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    double error = ulpError(outputs[i], reference(inputs[i]));
    if (!(error <= worst)) {
      worst = error;
      worstAt = i;
    }
  }
  EXPECT_LE(worst, maxUlp) << "worst input " << inputs[worstAt] << " (#"
                           << worstAt << "): got " << outputs[worstAt]
                           << ", expected "
                           << static_cast<double>(reference(inputs[worstAt]));
  std::printf("max error %.3f ulp over %zu inputs\n", worst, inputs.size());
}

long double expReference(long double x) { return expl(x); }
long double logReference(long double x) { return logl(x); }

TEST(GPUExpandF64MathTest, Exp) {
  F64MathKernel kernel("exp");
  ASSERT_TRUE(kernel.build()) << kernel.diagnostics;
  std::vector<double> edges = {
      0.0, -0.0, 1.0, -1.0, 1e-300, -1e-300, 0x1p-1074, kInf, -kInf, kNaN,
      -kNaN,
      // Largest finite result and the first overflow.
      709.782712893383973096, 709.782712893384, 709.79, 710.0, 1e10,
      // Normal/subnormal boundary, smallest subnormal, underflow to 0.
      -708.3964185322641, -708.4, -720.0, -744.44007192138126,
      -745.1332191019411, -745.1332191019412, -745.2, -746.0, -1e10,
      // Halfway points of the range reduction: n changes at (k + 0.5) ln2.
      0.5 * M_LN2, -0.5 * M_LN2, 1.5 * M_LN2, 700.5 * M_LN2};
  std::vector<double> inputs = makeInputs(edges, -750.0, 712.0, 1);
  // Small arguments: exp(x) = 1 + x + ...
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> small(-1e-3, 1e-3);
  for (size_t i = edges.size(); i < kCount; i += 16)
    inputs[i] = small(rng);
  std::vector<double> outputs = kernel.run(inputs);
  expectAccurate(inputs, outputs, expReference, 1.0);
  EXPECT_EQ(outputs[0], 1.0);
  EXPECT_EQ(outputs[7], kInf);
  EXPECT_EQ(outputs[8], 0.0);
  EXPECT_TRUE(std::isnan(outputs[9]));
}

TEST(GPUExpandF64MathTest, Log) {
  F64MathKernel kernel("log");
  ASSERT_TRUE(kernel.build()) << kernel.diagnostics;
  std::vector<double> edges = {0.0,
                               -0.0,
                               1.0,
                               -1.0,
                               kInf,
                               -kInf,
                               kNaN,
                               0x1p-1074,
                               0x1p-1073,
                               0x1p-1022,
                               0x0.fffffffffffffp-1022,
                               DBL_MAX,
                               2.0,
                               0.5,
                               M_SQRT2,
                               M_SQRT1_2,
                               1.0 + 0x1p-52,
                               1.0 - 0x1p-53,
                               M_E,
                               10.0,
                               1e-300,
                               1e300};
  std::vector<double> inputs =
      makeInputs(edges, 0.0, std::numeric_limits<double>::max(), 3);
  // Arguments near 1, where log(x) is small and cancellation would show.
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> nearOne(0.9, 1.1);
  for (size_t i = edges.size(); i < kCount; i += 8)
    inputs[i] = nearOne(rng);
  std::vector<double> outputs = kernel.run(inputs);
  expectAccurate(inputs, outputs, logReference, 1.0);
  EXPECT_EQ(outputs[0], -kInf);
  EXPECT_EQ(outputs[1], -kInf);
  EXPECT_EQ(outputs[2], 0.0);
  EXPECT_TRUE(std::isnan(outputs[3]));
  EXPECT_EQ(outputs[4], kInf);
  EXPECT_TRUE(std::isnan(outputs[5]));
  EXPECT_TRUE(std::isnan(outputs[6]));
}

} // namespace
