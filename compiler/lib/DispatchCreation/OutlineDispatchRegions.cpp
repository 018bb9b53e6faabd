//===- OutlineDispatchRegions.cpp - Regions to executables + dispatches ---===//
//
// Turns every kiln.dispatch_region into a kiln.executable holding one
// tensor-form kernel, and a kiln.dispatch that runs it. What a kernel takes as
// arguments is decided here: captured tensors become arguments, except cheap
// producers, which are recomputed inside the kernel so that the host never
// allocates or fills them.
//
//===----------------------------------------------------------------------===//
#include "kiln/DispatchCreation/Passes.h"

#include "DispatchUtils.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_OUTLINEDISPATCHREGIONSPASS
#include "kiln/DispatchCreation/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Builds the body of one kernel: maps every value the region captures to a
// kernel argument or to a clone of its (cheap) producer.
class KernelBuilder {
public:
  KernelBuilder(func::FuncOp kernel, IRMapping &mapping)
      : builder(kernel.getContext()), kernel(kernel), mapping(mapping) {
    builder.setInsertionPointToStart(&kernel.getBody().front());
  }

  LogicalResult materialize(Value value) {
    if (mapping.contains(value))
      return success();
    Operation *def = value.getDefiningOp();
    if (isa<RankedTensorType>(value.getType())) {
      if (def && isCheapProducer(def))
        return cloneCheapProducer(def);
      BlockArgument arg =
          kernel.getBody().front().addArgument(value.getType(), value.getLoc());
      mapping.map(value, arg);
      hostOperands.push_back(value);
      return success();
    }
    // A scalar (e.g. a constant or a tensor.extract feeding a generic's
    // body) is recomputed in the kernel; kernels take only tensors.
    if (!def || def->getNumRegions() != 0 || !isMemoryEffectFree(def))
      return emitError(value.getLoc())
             << "cannot pass scalar value of type " << value.getType()
             << " to a kernel: it is not computed by a side-effect free op";
    return cloneWithOperands(def);
  }

  SmallVector<Value> hostOperands;

private:
  LogicalResult cloneWithOperands(Operation *op) {
    for (Value operand : op->getOperands())
      if (failed(materialize(operand)))
        return failure();
    Operation *clone = builder.clone(*op, mapping);
    mapping.map(op->getResults(), clone->getResults());
    return success();
  }

  LogicalResult cloneCheapProducer(Operation *op) {
    // A splat constant becomes a fill of an empty tensor: kernels then need
    // no constant globals, and the fill vectorizes like any other op.
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto type = cast<RankedTensorType>(constant.getType());
      auto splat = cast<SplatElementsAttr>(constant.getValue());
      Value scalar = arith::ConstantOp::create(
          builder, op->getLoc(), cast<TypedAttr>(splat.getSplatValue<Attribute>()));
      Value empty = tensor::EmptyOp::create(builder, op->getLoc(),
                                            type.getShape(),
                                            type.getElementType());
      Value fill =
          linalg::FillOp::create(builder, op->getLoc(), scalar, empty)
              .getResult(0);
      mapping.map(constant.getResult(), fill);
      return success();
    }
    return cloneWithOperands(op);
  }

  OpBuilder builder;
  func::FuncOp kernel;
  IRMapping &mapping;
};

static std::string uniqueName(SymbolTable &symbols, StringRef base) {
  std::string name = base.str();
  for (unsigned suffix = 0; symbols.lookup(name);)
    name = (base + "_" + Twine(suffix++)).str();
  return name;
}

static LogicalResult outlineRegion(DispatchRegionOp region, StringRef name,
                                   SymbolTable &symbols, func::FuncOp host) {
  MLIRContext *context = region.getContext();
  Location loc = region.getLoc();
  OpBuilder builder(context);

  builder.setInsertionPoint(host);
  auto executable = ExecutableOp::create(builder, loc, name);
  builder.setInsertionPointToStart(&executable.getBlock());
  auto kernel = func::FuncOp::create(builder, loc, name,
                                     builder.getFunctionType({}, {}));
  kernel.addEntryBlock();

  IRMapping mapping;
  KernelBuilder kernelBuilder(kernel, mapping);
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(region.getBody(), captured);
  for (Value value : captured)
    if (failed(kernelBuilder.materialize(value))) {
      executable.erase();
      return failure();
    }

  Block &kernelBlock = kernel.getBody().front();
  builder.setInsertionPointToEnd(&kernelBlock);
  for (Operation &op : region.getBlock().without_terminator())
    builder.clone(op, mapping);
  auto yield = cast<YieldOp>(region.getBlock().getTerminator());
  SmallVector<Value> returned = llvm::map_to_vector(
      yield.getValues(), [&](Value v) { return mapping.lookup(v); });
  func::ReturnOp::create(builder, yield.getLoc(), returned);
  kernel.setFunctionType(builder.getFunctionType(
      kernelBlock.getArgumentTypes(), region.getResultTypes()));
  symbols.insert(executable);

  builder.setInsertionPoint(region);
  auto entryPoint = SymbolRefAttr::get(
      context, executable.getSymName(),
      {FlatSymbolRefAttr::get(context, kernel.getSymName())});
  auto dispatch =
      DispatchOp::create(builder, loc, region.getResultTypes(), entryPoint,
                         kernelBuilder.hostOperands);
  region.replaceAllUsesWith(dispatch.getResults());
  region.erase();
  return success();
}

struct OutlineDispatchRegionsPass
    : kiln::impl::OutlineDispatchRegionsPassBase<OutlineDispatchRegionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> hostFunctions(module.getOps<func::FuncOp>());
    for (func::FuncOp host : hostFunctions) {
      SmallVector<DispatchRegionOp> regions;
      host.walk([&](DispatchRegionOp region) { regions.push_back(region); });
      for (auto [index, region] : llvm::enumerate(regions)) {
        std::string name = uniqueName(
            symbols, (host.getSymName() + "_dispatch_" + Twine(index)).str());
        if (failed(outlineRegion(region, name, symbols, host)))
          return signalPassFailure();
      }
    }
  }
};

} // namespace
