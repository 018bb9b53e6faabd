//===- KilnOps.cpp - Kiln dialect ops -------------------------------------===//
#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::kiln;

// The kernel that `ref` (@executable::@function), the entry point of `op`,
// names. Null after an error at `op` when `ref` has another form or names no
// kernel.
static func::FuncOp lookupEntryPoint(Operation *op, SymbolRefAttr ref,
                                     SymbolTableCollection &symbolTable) {
  if (ref.getNestedReferences().size() != 1) {
    op->emitOpError("entry point must be @executable::@function, got ") << ref;
    return nullptr;
  }
  auto executable = symbolTable.lookupNearestSymbolFrom<ExecutableOp>(
      op, FlatSymbolRefAttr::get(ref.getRootReference()));
  if (!executable) {
    op->emitOpError("no kiln.executable named ") << ref.getRootReference();
    return nullptr;
  }
  auto func = symbolTable.lookupSymbolIn<func::FuncOp>(executable,
                                                       ref.getLeafReference());
  if (!func)
    op->emitOpError("executable ")
        << ref.getRootReference() << " has no function "
        << ref.getLeafReference();
  return func;
}

//===----------------------------------------------------------------------===//
// ExecutableOp
//===----------------------------------------------------------------------===//

void ExecutableOp::build(OpBuilder &builder, OperationState &state,
                         StringRef name) {
  state.addAttribute(mlir::SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  Region *body = state.addRegion();
  body->push_back(new Block());
}

//===----------------------------------------------------------------------===//
// DispatchOp
//===----------------------------------------------------------------------===//

LogicalResult
DispatchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  SymbolRefAttr ref = getEntryPoint();
  func::FuncOp func = lookupEntryPoint(*this, ref, symbolTable);
  if (!func)
    return failure();
  FunctionType type = func.getFunctionType();
  if (!llvm::equal(type.getInputs(), getArguments().getTypes()) ||
      !llvm::equal(type.getResults(), getResults().getTypes()))
    return emitOpError("type mismatch with kernel ")
           << ref << ": kernel has " << type << ", dispatch has "
           << FunctionType::get(getContext(), getArguments().getTypes(),
                                getResults().getTypes());
  return success();
}

//===----------------------------------------------------------------------===//
// DispatchRegionOp
//===----------------------------------------------------------------------===//

LogicalResult DispatchRegionOp::verify() {
  if (getBody().empty())
    return emitOpError("expects a body block");
  auto yield = dyn_cast<YieldOp>(getBlock().getTerminator());
  if (!yield)
    return emitOpError("body must end with kiln.yield");
  if (!llvm::equal(yield.getValues().getTypes(), getResultTypes()))
    return emitOpError("yields ")
           << yield.getValues().getTypes().size()
           << " values whose types differ from the region's result types";
  return success();
}

//===----------------------------------------------------------------------===//
// BufferAttr
//===----------------------------------------------------------------------===//

bool BufferAttr::overlaps(BufferAttr other) const {
  if (getSpace() != other.getSpace() || getIndex() != other.getIndex())
    return false;
  if (getLength() == 0 || other.getLength() == 0)
    return false;
  return getOffset() < other.getOffset() + other.getLength() &&
         other.getOffset() < getOffset() + getLength();
}

//===----------------------------------------------------------------------===//
// ChannelAttr
//===----------------------------------------------------------------------===//

LogicalResult
ChannelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                    FlatSymbolRefAttr grid, ArrayRef<int64_t> axes,
                    ArrayRef<int64_t> shape) {
  if (shape.empty() || llvm::any_of(shape, [](int64_t s) { return s <= 0; }))
    return emitError() << "channel grid shape must be static and positive";
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t axis : axes)
    if (axis < 0 || axis >= static_cast<int64_t>(shape.size()) ||
        !seen.insert(axis).second)
      return emitError() << "channel axes must be distinct grid axes in [0, "
                         << shape.size() << "), got axis " << axis;
  return success();
}

int64_t ChannelAttr::getGroupSize() const {
  int64_t size = 1;
  for (int64_t axis : getAxes())
    size *= getShape()[axis];
  return size;
}

// Whether the collective combines elements (and so needs a reduction).
static bool isReducing(CollectiveKind kind) {
  return kind == CollectiveKind::AllReduce ||
         kind == CollectiveKind::ReduceScatter;
}

// Checks what every collective form shares: a reduction exactly where the
// collective combines elements, and a root inside the group.
static LogicalResult verifyCollectiveAttrs(Operation *op, CollectiveKind kind,
                                           ReductionKind reduction,
                                           int64_t root, int64_t groupSize) {
  if (isReducing(kind) != (reduction != ReductionKind::None))
    return op->emitOpError("'")
           << stringifyCollectiveKind(kind)
           << (isReducing(kind) ? "' needs a reduction"
                                : "' takes no reduction, got ")
           << (isReducing(kind) ? "" : stringifyReductionKind(reduction));
  int64_t maxRoot = kind == CollectiveKind::Broadcast ? groupSize : 1;
  if (root < 0 || root >= maxRoot)
    return op->emitOpError("root ")
           << root << " is not a rank of the group (size " << groupSize
           << ")" << (kind == CollectiveKind::Broadcast ? "" : "; only broadcast has a root");
  return success();
}

//===----------------------------------------------------------------------===//
// CollectiveOp
//===----------------------------------------------------------------------===//

LogicalResult CollectiveOp::verify() {
  int64_t n = getChannel().getGroupSize();
  if (failed(verifyCollectiveAttrs(*this, getKind(), getReduction(), getRoot(),
                                   n)))
    return failure();
  auto inputType = cast<RankedTensorType>(getInput().getType());
  auto resultType = cast<RankedTensorType>(getResult().getType());
  if (!inputType.hasStaticShape() || !resultType.hasStaticShape())
    return emitOpError("needs static shapes");
  auto withGroup = [&](RankedTensorType type) {
    SmallVector<int64_t> shape{n};
    llvm::append_range(shape, type.getShape());
    return RankedTensorType::get(shape, type.getElementType());
  };
  RankedTensorType expected;
  switch (getKind()) {
  case CollectiveKind::AllReduce:
  case CollectiveKind::Broadcast:
    expected = inputType;
    break;
  case CollectiveKind::AllGather:
    expected = withGroup(inputType);
    break;
  case CollectiveKind::ReduceScatter:
    if (inputType != withGroup(resultType))
      return emitOpError("input must be the ")
             << n << " rank-major slices of the result, expected "
             << withGroup(resultType) << ", got " << inputType;
    return success();
  case CollectiveKind::AllToAll:
    if (inputType.getRank() == 0 || inputType.getDimSize(0) != n)
      return emitOpError("input must have the group size ")
             << n << " as outermost dimension, got " << inputType;
    expected = inputType;
    break;
  }
  if (resultType != expected)
    return emitOpError("result type must be ")
           << expected << " for '" << stringifyCollectiveKind(getKind())
           << "' over " << n << " ranks, got " << resultType;
  return success();
}

//===----------------------------------------------------------------------===//
// WindowCollectiveOp
//===----------------------------------------------------------------------===//

int64_t WindowCollectiveOp::getAlignment(Type element) {
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0 ||
      element.getIntOrFloatBitWidth() > 128)
    return 1;
  return 128 / element.getIntOrFloatBitWidth();
}

int64_t WindowCollectiveOp::getPartCount(CollectiveKind kind, bool twoShot,
                                         int64_t count, int64_t ranks,
                                         Type element) {
  if (kind == CollectiveKind::ReduceScatter)
    return count / ranks;
  if (twoShot)
    return llvm::alignTo(llvm::divideCeil(count, ranks),
                         getAlignment(element));
  return count;
}

int64_t WindowCollectiveOp::getRecvCount(CollectiveKind kind, int64_t count,
                                         int64_t ranks) {
  if (kind == CollectiveKind::AllGather)
    return ranks * count;
  if (kind == CollectiveKind::ReduceScatter)
    return count / ranks;
  return count;
}

LogicalResult WindowCollectiveOp::verify() {
  int64_t n = getRanks();
  CollectiveKind kind = getKind();
  if (n < 1 || getWorkgroups() < 1)
    return emitOpError("needs at least one rank and one workgroup, got ")
           << n << " ranks and " << getWorkgroups() << " workgroups";
  if (kind != CollectiveKind::AllReduce && kind != CollectiveKind::AllGather &&
      kind != CollectiveKind::ReduceScatter)
    return emitOpError("compiles all_reduce, all_gather and reduce_scatter, "
                       "not ")
           << stringifyCollectiveKind(kind);
  if (getTwoShot() && kind != CollectiveKind::AllReduce)
    return emitOpError("two_shot is an all_reduce algorithm, not ")
           << stringifyCollectiveKind(kind) << "'s";
  if (failed(verifyCollectiveAttrs(*this, kind, getReduction(), 0, n)))
    return failure();
  auto sendType = cast<MemRefType>(getSend().getType());
  Type element = sendType.getElementType();
  int64_t count = sendType.getDimSize(0);
  if (ShapedType::isDynamic(count) || count < 1)
    return emitOpError("needs a static, non-empty send buffer, got ")
           << sendType;
  if (kind == CollectiveKind::ReduceScatter && count % n != 0)
    return emitOpError("reduce_scatter needs a send of ")
           << n << " equal parts, got " << count << " elements";
  if (getWorkgroups() > getPartCount())
    return emitOpError("runs ")
           << getWorkgroups() << " workgroups over parts of only "
           << getPartCount() << " elements";
  if (getReduction() == ReductionKind::Avg && !isa<FloatType>(element))
    return emitOpError("averages floats only, got ") << element;
  bool bitwise = getReduction() == ReductionKind::And ||
                 getReduction() == ReductionKind::Or ||
                 getReduction() == ReductionKind::Xor;
  if (bitwise && !isa<IntegerType>(element))
    return emitOpError("bitwise reductions take integers, got ") << element;
  auto expect = [&](Value value, int64_t size, Type type,
                    StringRef what) -> LogicalResult {
    auto memref = cast<MemRefType>(value.getType());
    if (memref.getDimSize(0) != size || memref.getElementType() != type)
      return emitOpError() << what << " must be "
                           << MemRefType::get({size}, type) << ", got "
                           << memref;
    return success();
  };
  int64_t recvCount = getRecvCount(kind, count, n);
  Type i64 = IntegerType::get(getContext(), 64);
  return failure(failed(expect(getRecv(), recvCount, element, "recv")) ||
                 failed(expect(getData(), 2 * count, element, "window data")) ||
                 failed(expect(getSignals(),
                               getSignalCount(n, getWorkgroups(), getPhases()),
                               i64, "window signals")) ||
                 failed(expect(getPeers(), 2 * n + 1, i64, "peer table")));
}

//===----------------------------------------------------------------------===//
// RodataOp
//===----------------------------------------------------------------------===//

RankedTensorType RodataOp::getTensorType() {
  if (std::optional<Type> type = getParameterType())
    return cast<RankedTensorType>(*type);
  return cast<RankedTensorType>(getValueAttr().getType());
}

LogicalResult RodataOp::verify() {
  bool parameter = getParameter().has_value();
  if (parameter != getParameterType().has_value())
    return emitOpError("needs both a parameter name and its type");
  if (parameter == bool(getValueAttr()))
    return emitOpError("holds either a value or a load-time parameter");
  if (parameter && getParameter()->empty())
    return emitOpError("parameter name is empty");
  if (!parameter && !isa<RankedTensorType>(getValueAttr().getType()))
    return emitOpError("value must be a ranked tensor");
  return success();
}

//===----------------------------------------------------------------------===//
// RodataRefOp
//===----------------------------------------------------------------------===//

LogicalResult
RodataRefOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto rodata =
      symbolTable.lookupNearestSymbolFrom<RodataOp>(*this, getRodataAttr());
  if (!rodata)
    return emitOpError("no kiln.rodata named ") << getRodataAttr();
  if (rodata.getTensorType() != getType())
    return emitOpError("type ")
           << getType() << " differs from the rodata's type "
           << rodata.getTensorType();
  return success();
}

//===----------------------------------------------------------------------===//
// ProgramOp and commands
//===----------------------------------------------------------------------===//

void ProgramOp::build(OpBuilder &builder, OperationState &state,
                      StringRef name, FunctionType type,
                      uint64_t transientSize) {
  state.addAttribute(mlir::SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name),
                     TypeAttr::get(type));
  state.addAttribute(getTransientSizeAttrName(state.name),
                     builder.getI64IntegerAttr(transientSize));
  Region *body = state.addRegion();
  body->push_back(new Block());
}

LogicalResult
DispatchCommandOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  SymbolRefAttr ref = getEntryPoint();
  func::FuncOp func = lookupEntryPoint(*this, ref, symbolTable);
  if (!func)
    return failure();
  size_t expected = func.getNumArguments() + func.getNumResults();
  if (getBindings().size() != expected)
    return emitOpError("kernel ")
           << ref << " takes " << expected << " bindings, got "
           << getBindings().size();
  return success();
}

LogicalResult CopyCommandOp::verify() {
  if (getSource().getLength() != getTarget().getLength())
    return emitOpError("source and target lengths differ: ")
           << getSource().getLength() << " vs " << getTarget().getLength();
  if (getSource().overlaps(getTarget()))
    return emitOpError("source and target overlap");
  return success();
}

LogicalResult FillCommandOp::verify() {
  unsigned width = cast<IntegerAttr>(getPattern()).getType().getIntOrFloatBitWidth();
  if (width != 8 && width != 16 && width != 32 && width != 64)
    return emitOpError("pattern must be 8, 16, 32 or 64 bits, got ") << width;
  if (getTarget().getLength() % (width / 8) != 0)
    return emitOpError("target length ")
           << getTarget().getLength() << " is not a multiple of the "
           << width / 8 << "-byte pattern";
  return success();
}

LogicalResult CollectiveCommandOp::verify() {
  auto program = (*this)->getParentOfType<ProgramOp>();
  std::optional<ArrayAttr> channels = program.getChannels();
  int64_t channel = getChannel();
  if (!channels || channel >= static_cast<int64_t>(channels->size()))
    return emitOpError("channel ")
           << channel << " is not a channel of program @"
           << program.getSymName();
  int64_t n = cast<ChannelAttr>((*channels)[channel]).getGroupSize();
  if (failed(verifyCollectiveAttrs(*this, getKind(), getReduction(), getRoot(),
                                   n)))
    return failure();
  Type elementType = getElementType();
  if (!elementType.isIntOrFloat())
    return emitOpError("element type must be an integer or float, got ")
           << elementType;
  uint64_t elementBytes = getStoredByteSize(elementType);
  uint64_t count = getCount();
  uint64_t recvCount = count;
  if (getKind() == CollectiveKind::AllGather)
    recvCount = count * n;
  if (getKind() == CollectiveKind::ReduceScatter ||
      getKind() == CollectiveKind::AllToAll) {
    if (count % n != 0)
      return emitOpError("count ")
             << count << " is not divisible by the group size " << n;
    if (getKind() == CollectiveKind::ReduceScatter)
      recvCount = count / n;
  }
  if (getSend().getLength() != count * elementBytes)
    return emitOpError("send length ")
           << getSend().getLength() << " differs from " << count << " x "
           << elementType;
  if (getRecv().getLength() != recvCount * elementBytes)
    return emitOpError("recv length ")
           << getRecv().getLength() << " differs from " << recvCount << " x "
           << elementType;
  if (getSend().overlaps(getRecv()))
    return emitOpError("send and recv overlap");
  return success();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/KilnOps.cpp.inc"
