//===- GPUBufferizePass.cpp - One-shot bufferization of GPU kernels -------===//
//
// Like the host's, but every temporary is shared by the threads of a
// workgroup (the ops of a workgroup are distributed over threads after
// bufferization), so temporaries live in workgroup (shared) memory.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/GPUPipeline.h"
#include "kiln/Codegen/Passes.h"

#include "CodegenUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPUBUFFERIZEPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

static bool isWorkgroupMemory(Attribute memorySpace) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(memorySpace);
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

// Shared memory is allocated statically per kernel. A temporary whose size
// depends on the tile (partial tiles at the edges) gets a buffer of the
// largest tile size, viewed with the actual (dynamic) sizes.
static FailureOr<Value> createSharedAllocation(OpBuilder &b, Location loc,
                                               MemRefType type,
                                               ValueRange dynamicSizes,
                                               unsigned alignment) {
  MLIRContext *ctx = b.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  if (!isWorkgroupMemory(type.getMemorySpace()))
    type = MemRefType::get(type.getShape(), type.getElementType(),
                           type.getLayout(), workgroup);
  IntegerAttr alignAttr = b.getI64IntegerAttr(alignment);
  if (type.hasStaticShape())
    return memref::AllocOp::create(b, loc, type, ValueRange{}, alignAttr)
        .getResult();
  if (!type.getLayout().isIdentity())
    return emitError(loc) << "cannot allocate " << type
                          << " in shared memory: non-identity layout";

  int64_t capacity = 1;
  SmallVector<OpFoldResult> sizes;
  unsigned next = 0;
  for (int64_t dim : type.getShape()) {
    if (!ShapedType::isDynamic(dim)) {
      capacity *= dim;
      sizes.push_back(b.getIndexAttr(dim));
      continue;
    }
    Value size = dynamicSizes[next++];
    FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
        presburger::BoundType::UB, {size, std::nullopt},
        /*stopCondition=*/nullptr, /*closedUB=*/true);
    if (failed(bound))
      return emitError(loc) << "cannot bound the size of the shared-memory "
                               "temporary "
                            << type << "; its tile must have a static size";
    capacity *= *bound;
    sizes.push_back(size);
  }
  auto flatType = MemRefType::get({capacity}, type.getElementType(),
                                  MemRefLayoutAttrInterface(), workgroup);
  Value flat =
      memref::AllocOp::create(b, loc, flatType, ValueRange{}, alignAttr);
  // Row-major strides of the actual sizes (constants where they are known,
  // as the identity layout of `type` requires).
  SmallVector<OpFoldResult> strides(sizes.size());
  OpFoldResult stride = b.getIndexAttr(1);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    std::optional<int64_t> lhs = getConstantIntValue(stride);
    std::optional<int64_t> rhs = getConstantIntValue(sizes[i]);
    if (lhs && rhs)
      stride = b.getIndexAttr(*lhs * *rhs);
    else
      stride = arith::MulIOp::create(
                   b, loc, getValueOrCreateConstantIndexOp(b, loc, stride),
                   getValueOrCreateConstantIndexOp(b, loc, sizes[i]))
                   .getResult();
  }
  return memref::ReinterpretCastOp::create(b, loc, type, flat,
                                           b.getIndexAttr(0), sizes, strides)
      .getResult();
}

// Every buffer the bufferization creates is put in workgroup memory, which
// cannot hold initialized data; tensor constants are given their own global
// (device global memory) first.
static void hoistConstantsToGlobals(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  auto global = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Global);
  SymbolTable symbols(module);
  SmallVector<arith::ConstantOp> constants;
  module.walk([&](arith::ConstantOp op) {
    if (isa<RankedTensorType>(op.getType()))
      constants.push_back(op);
  });
  OpBuilder b(ctx);
  for (arith::ConstantOp op : constants) {
    auto type = cast<RankedTensorType>(op.getType());
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType(),
                                      MemRefLayoutAttrInterface(), global);
    b.setInsertionPointToStart(module.getBody());
    auto globalOp = memref::GlobalOp::create(
        b, op.getLoc(), "__kiln_constant", b.getStringAttr("private"),
        memrefType, cast<ElementsAttr>(op.getValue()), /*constant=*/true,
        /*alignment=*/b.getI64IntegerAttr(16));
    symbols.insert(globalOp); // makes the name unique
    b.setInsertionPoint(op);
    Value buffer = memref::GetGlobalOp::create(b, op.getLoc(), memrefType,
                                               globalOp.getSymName());
    auto tensor = bufferization::ToTensorOp::create(
        b, op.getLoc(), type, buffer, /*restrict=*/true, /*writable=*/false);
    op.replaceAllUsesWith(tensor.getResult());
    op.erase();
  }
}

// tensor.generate (what tiling a tensor.pad makes of tiles that are all
// padding) does not bufferize into a non-default memory space ("memory space
// not implemented yet"): as a linalg.generic over a tensor.empty it does,
// its body reading the element's indices through linalg.index.
struct GenerateToLinalg : OpRewritePattern<tensor::GenerateOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::GenerateOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          type.getElementType(),
                                          op.getDynamicExtents());
    int64_t rank = type.getRank();
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{empty}, maps,
        iterators, [&](OpBuilder &b, Location loc, ValueRange) {
          Block &body = op.getBody().front();
          IRMapping mapping;
          for (int64_t d = 0; d < rank; ++d)
            mapping.map(body.getArgument(d),
                        linalg::IndexOp::create(b, loc, d).getResult());
          for (Operation &inner : body.without_terminator())
            b.clone(inner, mapping);
          auto yield = cast<tensor::YieldOp>(body.getTerminator());
          linalg::YieldOp::create(
              b, loc, mapping.lookupOrDefault(yield.getValue()));
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

// Tiling a tensor.pad guards tiles that are all padding:
//   scf.if %empty { tensor.generate { yield %pad } }
//   else { tensor.pad (extract_slice ...) { yield %pad } }
// The two branches bufferize to buffers in different memory spaces (a
// workgroup temporary and the pad's own allocation), which scf.if refuses.
// The else branch computes the same tile when the slice is empty (a pad of
// a zero-size slice is all padding), so the if becomes that branch.
struct DropPadZeroSliceGuard : OpRewritePattern<scf::IfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(scf::IfOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumResults() != 1 || op.getElseRegion().empty())
      return failure();
    Block &thenBlock = op.getThenRegion().front();
    Block &elseBlock = op.getElseRegion().front();
    auto thenYield = cast<scf::YieldOp>(thenBlock.getTerminator());
    auto elseYield = cast<scf::YieldOp>(elseBlock.getTerminator());
    auto generate = thenYield.getOperand(0).getDefiningOp<tensor::GenerateOp>();
    auto pad = elseYield.getOperand(0).getDefiningOp<tensor::PadOp>();
    if (!generate || !pad || &thenBlock.front() != generate.getOperation() ||
        generate.getType() != pad.getType())
      return failure();
    // Both yield the same padding value, whatever the indices.
    Value filled = cast<tensor::YieldOp>(generate.getBody().front().getTerminator())
                       .getValue();
    Value padValue = pad.getConstantPaddingValue();
    if (!padValue || !filled)
      return failure();
    auto sameConstant = [](Value a, Value b) {
      if (a == b)
        return true;
      Attribute x, y;
      return matchPattern(a, m_Constant(&x)) &&
             matchPattern(b, m_Constant(&y)) && x == y;
    };
    if (!sameConstant(filled, padValue))
      return failure();
    rewriter.inlineBlockBefore(&elseBlock, op);
    rewriter.replaceOp(op, elseYield.getOperand(0));
    rewriter.eraseOp(elseYield);
    return success();
  }
};

struct GPUBufferizePass
    : public kiln::impl::GPUBufferizePassBase<GPUBufferizePass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    GPUBufferizePassBase::getDependentDialects(registry);
    registerGPUCodegenDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // tensor.concat does not bufferize into a non-default memory space;
    // as insert_slices into its destination it bufferizes to copies.
    // Padded tiles lose their all-padding guard (DropPadZeroSliceGuard);
    // any other tensor.generate becomes a linalg.generic (GenerateToLinalg).
    RewritePatternSet patterns(&getContext());
    tensor::populateDecomposeTensorConcatPatterns(patterns);
    patterns.add<DropPadZeroSliceGuard>(&getContext(), /*benefit=*/2);
    patterns.add<GenerateToLinalg>(&getContext());
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
    hoistConstantsToGlobals(module);
    auto memorySpaceFn = [&](TensorType type) -> std::optional<Attribute> {
      return gpu::AddressSpaceAttr::get(module.getContext(),
                                        gpu::AddressSpace::Workgroup);
    };
    if (failed(bufferizeKernels(module, createSharedAllocation,
                                memorySpaceFn)))
      return signalPassFailure();
  }
};

} // namespace
