//===- CompileCollectives.cpp - Kernels for small collectives -------------===//
//
// A small all_reduce, all_gather or reduce_scatter costs a library
// collective's fixed latency; as a kernel over a symmetric window it costs
// one dispatch. This pass gives each such kiln.collective an executable whose
// kernel holds one kiln.window_collective; the targets lower that op, and
// host lowering dispatches the kernel over a window of the program.
//
//===----------------------------------------------------------------------===//
#include "kiln/DispatchCreation/Passes.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_COMPILECOLLECTIVESPASS
#include "kiln/DispatchCreation/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

// A workgroup's share is at least this many bytes, and a kernel has at most
// kMaxWorkgroups workgroups (each waits on every peer: more workgroups mean
// more flags to poll).
static constexpr int64_t kMinBytesPerWorkgroup = 4 * 1024;
static constexpr int64_t kMaxWorkgroups = 64;

// Creates the executable and kernel of `collective`, named `name`.
static func::FuncOp createKernel(CollectiveOp collective, StringRef name,
                                 func::FuncOp host, bool twoShot) {
  MLIRContext *context = collective.getContext();
  Location loc = collective.getLoc();
  auto inputType = cast<RankedTensorType>(collective.getInput().getType());
  Type element = inputType.getElementType();
  int64_t count = inputType.getNumElements();
  int64_t ranks = collective.getChannel().getGroupSize();
  int64_t bytes = count * getStoredByteSize(element);
  CollectiveKind kind = collective.getKind();
  // Workgroups split each part (the whole send, or one rank's share of a
  // reduce_scatter or two-shot all_reduce).
  int64_t partCount =
      WindowCollectiveOp::getPartCount(kind, twoShot, count, ranks, element);
  int64_t workgroups =
      std::clamp<int64_t>(llvm::divideCeil(bytes, kMinBytesPerWorkgroup), 1,
                          std::min(kMaxWorkgroups, partCount));
  int64_t recvCount = WindowCollectiveOp::getRecvCount(kind, count, ranks);
  Type i64 = IntegerType::get(context, 64);
  SmallVector<Type> types = {
      MemRefType::get({count}, element), MemRefType::get({recvCount}, element),
      MemRefType::get({2 * count}, element),
      MemRefType::get({WindowCollectiveOp::getSignalCount(ranks, workgroups,
                                                          twoShot ? 2 : 1)},
                      i64),
      MemRefType::get({2 * ranks + 1}, i64)};

  OpBuilder builder(context);
  builder.setInsertionPoint(host);
  auto executable = ExecutableOp::create(builder, loc, name);
  builder.setInsertionPointToStart(&executable.getBlock());
  auto kernel = func::FuncOp::create(builder, loc, name,
                                     builder.getFunctionType(types, {}));
  Block *entry = kernel.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  WindowCollectiveOp::create(builder, loc, kind, collective.getReduction(),
                             ranks, workgroups, twoShot, entry->getArgument(0),
                             entry->getArgument(1), entry->getArgument(2),
                             entry->getArgument(3), entry->getArgument(4));
  func::ReturnOp::create(builder, loc);
  return kernel;
}

namespace {
struct CompileCollectivesPass
    : kiln::impl::CompileCollectivesPassBase<CompileCollectivesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxBytes <= 0 && !libraryGaps)
      return;
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto host : llvm::to_vector(module.getOps<func::FuncOp>())) {
      unsigned index = 0;
      host.walk([&](CollectiveOp collective) {
        CollectiveKind kind = collective.getKind();
        bool reduces = kind == CollectiveKind::AllReduce ||
                       kind == CollectiveKind::ReduceScatter;
        if (!reduces && kind != CollectiveKind::AllGather)
          return;
        auto type = cast<RankedTensorType>(collective.getInput().getType());
        int64_t bytes =
            type.getNumElements() * getStoredByteSize(type.getElementType());
        // What no library reduces (bitwise reductions, i1), and what
        // NCCL/RCCL cannot (16-bit integers), are kernels at any size.
        ReductionKind reduction = collective.getReduction();
        Type element = type.getElementType();
        bool libraryLacksType =
            reduces &&
            (reduction == ReductionKind::And ||
             reduction == ReductionKind::Or ||
             reduction == ReductionKind::Xor || element.isInteger(1) ||
             (gpuLibraries && element.isInteger(16)));
        int64_t ranks = collective.getChannel().getGroupSize();
        bool asKernel =
            libraryLacksType ? maxBytes > 0 || libraryGaps : bytes <= maxBytes;
        if (bytes == 0 || !asKernel || ranks < 2)
          return;
        // Two ranks read as much one-shot as two-shot, in one exchange.
        bool twoShot = kind == CollectiveKind::AllReduce && ranks > 2 &&
                       twoShotMinBytes > 0 && bytes >= twoShotMinBytes;
        std::string base =
            (host.getSymName() + "_" + stringifyCollectiveKind(kind) +
             (twoShot ? "_two_shot_" : "_") + Twine(index++))
                .str();
        std::string name = base;
        for (unsigned suffix = 0; symbols.lookup(name);)
          name = base + "_" + std::to_string(suffix++);
        func::FuncOp kernel = createKernel(collective, name, host, twoShot);
        symbols.insert(kernel->getParentOp());
        collective.setKernelAttr(SymbolRefAttr::get(
            collective.getContext(), name,
            {FlatSymbolRefAttr::get(kernel.getSymNameAttr())}));
      });
    }
  }
};
} // namespace
