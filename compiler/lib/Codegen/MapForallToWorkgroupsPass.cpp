//===- MapForallToWorkgroupsPass.cpp - Forall to workgroup ids ------------===//
//
// Distributes the bufferized workgroup scf.forall: each workgroup runs one
// iteration, selected by the workgroup ids the ABI wrapper passes in.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTMAPFORALLTOWORKGROUPSPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

struct HostMapForallToWorkgroupsPass
    : public kiln::impl::HostMapForallToWorkgroupsPassBase<
          HostMapForallToWorkgroupsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || func->hasAttr(kWorkgroupCountAttrName))
      return;
    MLIRContext *ctx = &getContext();
    if (llvm::any_of(func.getArgumentTypes(),
                     [](Type t) { return isa<TensorType>(t); })) {
      func.emitError() << "kiln-host-map-forall-to-workgroups expects a "
                          "bufferized kernel, found tensor arguments";
      return signalPassFailure();
    }

    SmallVector<scf::ForallOp> foralls;
    func.walk([&](scf::ForallOp op) {
      if (op.getMapping() &&
          llvm::all_of(*op.getMapping(), llvm::IsaPred<gpu::GPUBlockMappingAttr>))
        foralls.push_back(op);
    });
    if (foralls.size() > 1) {
      foralls[1].emitError() << "a host kernel distributes at most one "
                                "scf.forall over workgroups";
      return signalPassFailure();
    }

    // Workgroup ids x, y, z: appended after the bindings.
    unsigned firstId = func.getNumArguments();
    IndexType indexType = IndexType::get(ctx);
    SmallVector<unsigned> positions(3, firstId);
    SmallVector<Type> types(3, indexType);
    SmallVector<DictionaryAttr> attrs(3, DictionaryAttr::get(ctx));
    SmallVector<Location> locs(3, func.getLoc());
    if (failed(func.insertArguments(positions, types, attrs, locs)))
      return signalPassFailure();

    SmallVector<int64_t> grid = {1, 1, 1};
    if (!foralls.empty()) {
      scf::ForallOp forall = foralls.front();
      if (forall.getNumResults() != 0) {
        forall.emitError() << "workgroup scf.forall still has tensor results; "
                              "run kiln-host-bufferize first";
        return signalPassFailure();
      }
      std::optional<SmallVector<int64_t>> lbs =
          getConstantIntValues(forall.getMixedLowerBound());
      std::optional<SmallVector<int64_t>> ubs =
          getConstantIntValues(forall.getMixedUpperBound());
      std::optional<SmallVector<int64_t>> steps =
          getConstantIntValues(forall.getMixedStep());
      if (!lbs || !ubs || !steps) {
        forall.emitError() << "workgroup scf.forall must have static bounds";
        return signalPassFailure();
      }

      IRRewriter rewriter(ctx);
      rewriter.setInsertionPoint(forall);
      Location loc = forall.getLoc();
      SmallVector<Value> ivs;
      for (auto [i, attr] : llvm::enumerate(*forall.getMapping())) {
        auto dim = static_cast<unsigned>(
            cast<gpu::GPUBlockMappingAttr>(attr).getBlock());
        if (dim > 2) {
          forall.emitError() << "workgroup mapping " << attr
                             << " is not one of x, y, z";
          return signalPassFailure();
        }
        int64_t trips = llvm::divideCeil((*ubs)[i] - (*lbs)[i], (*steps)[i]);
        grid[dim] = trips;
        // iv = lb + id * step
        Value iv = func.getArgument(firstId + dim);
        if ((*steps)[i] != 1)
          iv = arith::MulIOp::create(
              rewriter, loc, iv,
              arith::ConstantIndexOp::create(rewriter, loc, (*steps)[i]));
        if ((*lbs)[i] != 0)
          iv = arith::AddIOp::create(
              rewriter, loc, iv,
              arith::ConstantIndexOp::create(rewriter, loc, (*lbs)[i]));
        ivs.push_back(iv);
      }
      Block *body = forall.getBody();
      rewriter.eraseOp(body->getTerminator());
      rewriter.inlineBlockBefore(body, forall, ivs);
      rewriter.eraseOp(forall);
    }
    func->setAttr(kWorkgroupCountAttrName, DenseI64ArrayAttr::get(ctx, grid));
  }
};

} // namespace
