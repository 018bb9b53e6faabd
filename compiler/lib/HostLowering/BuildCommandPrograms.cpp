//===- BuildCommandPrograms.cpp - Memory planning and command programs ----===//
//
// Lowers each host function to a kiln.program: every tensor gets a buffer
// range (input, output, rodata or a statically planned range of one transient
// arena), and the function's work becomes dispatch, collective, fill, copy
// and barrier commands that the runtime records once and replays per call.
//
//===----------------------------------------------------------------------===//
#include "kiln/HostLowering/Passes.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

namespace mlir::kiln {
#define GEN_PASS_DEF_BUILDCOMMANDPROGRAMSPASS
#include "kiln/HostLowering/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

static uint64_t getTensorByteSize(RankedTensorType type) {
  return type.getNumElements() * getStoredByteSize(type.getElementType());
}

// The integer whose little-endian bytes, repeated, spell `value` as stored in
// a buffer of its type. i1 is widened to a byte like every stored i1.
static IntegerAttr getFillPattern(MLIRContext *context, Attribute value) {
  APInt bits;
  if (auto floatAttr = dyn_cast<FloatAttr>(value))
    bits = floatAttr.getValue().bitcastToAPInt();
  else if (auto intAttr = dyn_cast<IntegerAttr>(value))
    bits = intAttr.getValue();
  else
    return {};
  unsigned width = std::max<unsigned>(8, llvm::PowerOf2Ceil(bits.getBitWidth()));
  if (width > 64)
    return {};
  bits = bits.zext(width);
  return IntegerAttr::get(IntegerType::get(context, width), bits);
}

// The shape operand of tensor.reshape is static metadata, not data.
static bool isReshapeShape(OpOperand &use) {
  return isa<tensor::ReshapeOp>(use.getOwner()) && use.getOperandNumber() == 1;
}

namespace {

// One allocation: a value that needs its own bytes (aliases share the
// storage of their source).
struct Storage {
  enum class Kind { Input, Rodata, Produced, Fill, Undefined };
  Kind kind;
  Location loc;
  uint64_t size = 0;
  unsigned index = 0;          // input or rodata index
  IntegerAttr pattern;         // Fill
  unsigned defPosition = 0;    // op position that defines the value
  unsigned lastUse = 0;        // last op position that uses the value
  bool needed = false;         // read by a command or returned
  std::optional<unsigned> outputIndex; // computed directly into output[i]
  BufferAttr buffer;
};

class ProgramBuilder {
public:
  ProgramBuilder(func::FuncOp func, const llvm::StringMap<unsigned> &rodata,
                 uint64_t arenaAlignment)
      : func(func), context(func.getContext()), rodataIndex(rodata),
        arenaAlignment(arenaAlignment) {}

  LogicalResult build();

private:
  LogicalResult collectStorage();
  void assignOutputs();
  void planTransients();
  void emitCommands(ProgramOp program);
  void emitCollective(OpBuilder &builder, CollectiveOp collective);
  void emit(OpBuilder &builder, Operation *command, ArrayRef<BufferAttr> reads,
            ArrayRef<BufferAttr> writes);

  Storage &storageOf(Value value) { return storages[storageIndex.lookup(value)]; }
  BufferAttr bufferOf(Value value) { return storageOf(value).buffer; }

  func::FuncOp func;
  MLIRContext *context;
  const llvm::StringMap<unsigned> &rodataIndex;
  uint64_t arenaAlignment;

  std::vector<Storage> storages;
  llvm::DenseMap<Value, unsigned> storageIndex;
  SmallVector<std::pair<unsigned, unsigned>> resultCopies; // storage, output
  uint64_t arenaSize = 0;
  unsigned endPosition = 0;

  // Distinct channels of the function's collectives, in first-use order.
  SmallVector<Attribute> channels;
  // The windows of the compiled collectives, one each, in program order.
  SmallVector<Attribute> windows;

  // Ranges accessed since the last barrier.
  SmallVector<BufferAttr> pendingReads, pendingWrites;
};

} // namespace

LogicalResult ProgramBuilder::collectStorage() {
  Block &body = func.getBody().front();
  auto addStorage = [&](Value value, Storage storage) {
    storageIndex[value] = storages.size();
    storages.push_back(std::move(storage));
  };
  auto sizeOf = [](Value value) {
    return getTensorByteSize(cast<RankedTensorType>(value.getType()));
  };

  for (BlockArgument arg : body.getArguments())
    addStorage(arg, {Storage::Kind::Input, arg.getLoc(), sizeOf(arg),
                     arg.getArgNumber()});

  unsigned position = 0;
  for (Operation &op : body) {
    ++position;
    // Every tensor operand extends the life of its storage to this op.
    for (OpOperand &use : op.getOpOperands()) {
      Value operand = use.get();
      if (!isa<RankedTensorType>(operand.getType()) || isReshapeShape(use))
        continue;
      auto it = storageIndex.find(operand);
      if (it == storageIndex.end())
        return op.emitError("host lowering: operand of '")
               << op.getName() << "' has no buffer";
      Storage &storage = storages[it->second];
      storage.lastUse = std::max(storage.lastUse, position);
      if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
               tensor::ReshapeOp, tensor::BitcastOp, tensor::CastOp>(op))
        storage.needed = true;
    }

    auto define = [&](Value value, Storage storage) {
      storage.defPosition = storage.lastUse = position;
      addStorage(value, std::move(storage));
    };
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(&op)
            .Case<DispatchOp>([&](DispatchOp dispatch) -> LogicalResult {
              for (Value value : dispatch.getResults())
                define(value, {Storage::Kind::Produced, op.getLoc(),
                               sizeOf(value)});
              return success();
            })
            .Case<CollectiveOp>([&](CollectiveOp collective) -> LogicalResult {
              // A compiled collective's kernel takes send, recv and the
              // window's data, signals and peer table.
              ReductionKind reduction = collective.getReduction();
              if (!collective.getKernelAttr() &&
                  (reduction == ReductionKind::And ||
                   reduction == ReductionKind::Or ||
                   reduction == ReductionKind::Xor))
                return op.emitError("host lowering: reduction '")
                       << stringifyReductionKind(reduction)
                       << "' has no library collective; it needs a compiled "
                          "collective kernel (kiln-compile-collectives)";
              if (SymbolRefAttr kernelRef = collective.getKernelAttr()) {
                auto kernel =
                    SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
                        collective, kernelRef);
                if (!kernel || kernel.getNumArguments() != 5 ||
                    !llvm::all_of(kernel.getArgumentTypes(),
                                  llvm::IsaPred<MemRefType>))
                  return op.emitError("host lowering: compiled collective "
                                      "kernel ")
                         << kernelRef
                         << " is missing or does not take send, recv and "
                            "the window's three buffers";
              }
              // The collective writes its own recv buffer, like a kernel.
              define(collective.getResult(), {Storage::Kind::Produced,
                                              op.getLoc(),
                                              sizeOf(collective.getResult())});
              return success();
            })
            .Case<RodataRefOp>([&](RodataRefOp ref) -> LogicalResult {
              auto it = rodataIndex.find(ref.getRodata());
              if (it == rodataIndex.end())
                return op.emitError("no kiln.rodata named ")
                       << ref.getRodataAttr();
              define(ref.getResult(), {Storage::Kind::Rodata, op.getLoc(),
                                       sizeOf(ref.getResult()), it->second});
              return success();
            })
            .Case<tensor::EmptyOp>([&](tensor::EmptyOp empty) -> LogicalResult {
              define(empty.getResult(), {Storage::Kind::Undefined,
                                         op.getLoc(), sizeOf(empty)});
              return success();
            })
            .Case<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                  tensor::ReshapeOp, tensor::BitcastOp, tensor::CastOp>(
                [&](Operation *alias) -> LogicalResult {
                  Value source = alias->getOperand(0);
                  if (sizeOf(source) != sizeOf(alias->getResult(0)))
                    return alias->emitError("host lowering: '")
                           << alias->getName()
                           << "' changes the byte size of its operand";
                  storageIndex[alias->getResult(0)] =
                      storageIndex.lookup(source);
                  return success();
                })
            .Case<arith::ConstantOp>([&](arith::ConstantOp constant)
                                         -> LogicalResult {
              if (!isa<RankedTensorType>(constant.getType()))
                return success(); // scalars only feed other host ops
              if (llvm::all_of(constant->getUses(), isReshapeShape))
                return success(); // static metadata of an alias
              auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
              IntegerAttr pattern =
                  splat ? getFillPattern(context,
                                         splat.getSplatValue<Attribute>())
                        : IntegerAttr();
              if (!pattern)
                return op.emitError("host lowering: dense constant must be "
                                    "moved to rodata first "
                                    "(kiln-move-constants-to-rodata)");
              Storage storage{Storage::Kind::Fill, op.getLoc(),
                              sizeOf(constant)};
              storage.pattern = pattern;
              define(constant.getResult(), std::move(storage));
              return success();
            })
            .Case<linalg::FillOp>([&](linalg::FillOp fill) -> LogicalResult {
              Attribute value;
              if (Operation *def = fill.getInputs().front().getDefiningOp())
                if (auto constant = dyn_cast<arith::ConstantOp>(def))
                  value = constant.getValue();
              IntegerAttr pattern =
                  value ? getFillPattern(context, value) : IntegerAttr();
              if (!pattern || fill->getNumResults() != 1)
                return op.emitError("host lowering: 'linalg.fill' of a "
                                    "non-constant value must be inside a "
                                    "dispatch");
              Storage storage{Storage::Kind::Fill, op.getLoc(),
                              sizeOf(fill.getResult(0))};
              storage.pattern = pattern;
              define(fill.getResult(0), std::move(storage));
              return success();
            })
            .Case<func::ReturnOp>([&](func::ReturnOp ret) -> LogicalResult {
              for (Value value : ret.getOperands())
                storageOf(value).needed = true;
              return success();
            })
            .Default([&](Operation *other) -> LogicalResult {
              // Scalar ops left over only feed ops that were outlined.
              if (other->getNumResults() != 0 &&
                  llvm::none_of(other->getResultTypes(),
                                llvm::IsaPred<ShapedType>) &&
                  other->use_empty())
                return success();
              return other->emitError("host lowering: '")
                     << other->getName()
                     << "' cannot run on the host; it must be inside a "
                        "dispatch (run dispatch creation first)";
            });
    if (failed(result))
      return failure();
  }
  endPosition = position;
  return success();
}

void ProgramBuilder::assignOutputs() {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    unsigned id = storageIndex.lookup(value);
    Storage &storage = storages[id];
    bool computable = storage.kind == Storage::Kind::Produced ||
                      storage.kind == Storage::Kind::Fill ||
                      storage.kind == Storage::Kind::Undefined;
    if (computable && !storage.outputIndex) {
      // Computed in place: no copy, no transient range.
      storage.outputIndex = index;
      storage.buffer = BufferAttr::get(context, BufferSpace::Output, index, 0,
                                       storage.size);
      continue;
    }
    // Inputs and rodata cannot be returned without a copy (the caller owns
    // outputs), nor can one value fill two outputs.
    resultCopies.push_back({id, static_cast<unsigned>(index)});
    storage.lastUse = endPosition;
  }
}

void ProgramBuilder::planTransients() {
  struct Placed {
    unsigned begin, end;
    uint64_t offset, size;
  };
  SmallVector<Placed> placed;
  for (Storage &storage : storages) {
    if (storage.buffer)
      continue;
    if (storage.kind == Storage::Kind::Input) {
      storage.buffer = BufferAttr::get(context, BufferSpace::Input,
                                       storage.index, 0, storage.size);
      continue;
    }
    if (storage.kind == Storage::Kind::Rodata) {
      storage.buffer = BufferAttr::get(context, BufferSpace::Rodata,
                                       storage.index, 0, storage.size);
      continue;
    }
    // Unused splats need no bytes at all; dispatch results always do, since
    // the kernel writes them.
    if (storage.kind != Storage::Kind::Produced && !storage.needed)
      continue;
    uint64_t size = llvm::alignTo(storage.size, arenaAlignment);
    // First fit among the ranges of values live at the same time. Storages
    // come in definition order, so this is a linear scan allocator.
    SmallVector<Placed *> live;
    for (Placed &other : placed)
      if (other.begin <= storage.lastUse && storage.defPosition <= other.end)
        live.push_back(&other);
    llvm::sort(live, [](Placed *a, Placed *b) { return a->offset < b->offset; });
    uint64_t offset = 0;
    for (Placed *other : live) {
      if (offset + size <= other->offset)
        break;
      offset = std::max(offset, other->offset + other->size);
    }
    placed.push_back({storage.defPosition, storage.lastUse, offset, size});
    arenaSize = std::max(arenaSize, offset + size);
    storage.buffer = BufferAttr::get(context, BufferSpace::Transient, 0,
                                     offset, storage.size);
  }
}

void ProgramBuilder::emit(OpBuilder &builder, Operation *command,
                          ArrayRef<BufferAttr> reads,
                          ArrayRef<BufferAttr> writes) {
  auto overlapsAny = [](BufferAttr buffer, ArrayRef<BufferAttr> others) {
    return llvm::any_of(others,
                        [&](BufferAttr other) { return buffer.overlaps(other); });
  };
  bool hazard =
      llvm::any_of(reads, [&](BufferAttr r) { return overlapsAny(r, pendingWrites); }) ||
      llvm::any_of(writes, [&](BufferAttr w) {
        return overlapsAny(w, pendingWrites) || overlapsAny(w, pendingReads);
      });
  if (hazard) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(command);
    BarrierCommandOp::create(builder, command->getLoc());
    pendingReads.clear();
    pendingWrites.clear();
  }
  pendingReads.append(reads.begin(), reads.end());
  pendingWrites.append(writes.begin(), writes.end());
}

void ProgramBuilder::emitCollective(OpBuilder &builder,
                                    CollectiveOp collective) {
  auto *it = llvm::find(channels, collective.getChannel());
  unsigned channel = it - channels.begin();
  if (it == channels.end())
    channels.push_back(collective.getChannel());
  auto inputType = cast<RankedTensorType>(collective.getInput().getType());
  BufferAttr send = bufferOf(collective.getInput());
  BufferAttr recv = bufferOf(collective.getResult());
  if (SymbolRefAttr kernelRef = collective.getKernelAttr()) {
    // A compiled collective: its kernel over a window of its own, whose
    // sizes are the kernel's window bindings (kiln.window_collective).
    auto kernel = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(collective,
                                                                     kernelRef);
    auto sizeOf = [&](unsigned argument) {
      auto type = cast<MemRefType>(kernel.getArgumentTypes()[argument]);
      return uint64_t(type.getNumElements()) *
             getStoredByteSize(type.getElementType());
    };
    uint64_t dataSize = sizeOf(2), signalsSize = sizeOf(3),
             peersSize = sizeOf(4);
    unsigned index = windows.size();
    windows.push_back(
        WindowAttr::get(context, channel, dataSize, signalsSize / 8));
    auto bindings = builder.getArrayAttr(
        {send, recv,
         BufferAttr::get(context, BufferSpace::WindowData, index, 0, dataSize),
         BufferAttr::get(context, BufferSpace::WindowSignals, index, 0,
                         signalsSize),
         BufferAttr::get(context, BufferSpace::WindowPeers, index, 0,
                         peersSize)});
    auto command = DispatchCommandOp::create(builder, collective.getLoc(),
                                             kernelRef, bindings);
    emit(builder, command, {send}, {recv});
    return;
  }
  // The count is what each rank sends; the recv size follows from the kind.
  auto command = CollectiveCommandOp::create(
      builder, collective.getLoc(), collective.getKind(),
      collective.getReduction(), inputType.getNumElements(),
      inputType.getElementType(), channel, collective.getRoot(), send, recv);
  emit(builder, command, {send}, {recv});
}

void ProgramBuilder::emitCommands(ProgramOp program) {
  OpBuilder builder(context);
  builder.setInsertionPointToEnd(&program.getBlock());
  for (Operation &op : func.getBody().front()) {
    if (auto collective = dyn_cast<CollectiveOp>(op)) {
      emitCollective(builder, collective);
      continue;
    }
    if (auto dispatch = dyn_cast<DispatchOp>(op)) {
      SmallVector<BufferAttr> reads, writes;
      SmallVector<Attribute> bindings;
      for (Value operand : dispatch.getArguments()) {
        reads.push_back(bufferOf(operand));
        bindings.push_back(reads.back());
      }
      for (Value result : dispatch.getResults()) {
        writes.push_back(bufferOf(result));
        bindings.push_back(writes.back());
      }
      auto command = DispatchCommandOp::create(
          builder, op.getLoc(), dispatch.getEntryPoint(),
          builder.getArrayAttr(bindings));
      emit(builder, command, reads, writes);
      continue;
    }
    // Splats are filled where they are defined, if anything reads them.
    if (!isa<arith::ConstantOp, linalg::FillOp>(op) ||
        !storageIndex.count(op.getResult(0)))
      continue;
    Storage &storage = storageOf(op.getResult(0));
    if (storage.kind != Storage::Kind::Fill || !storage.buffer)
      continue;
    auto command = FillCommandOp::create(builder, op.getLoc(), storage.buffer,
                                         storage.pattern);
    emit(builder, command, {}, {storage.buffer});
  }
  for (auto [id, output] : resultCopies) {
    Storage &storage = storages[id];
    auto target = BufferAttr::get(context, BufferSpace::Output, output, 0,
                                  storage.size);
    auto command = CopyCommandOp::create(builder, storage.loc, storage.buffer,
                                         target);
    emit(builder, command, {storage.buffer}, {target});
  }
}

LogicalResult ProgramBuilder::build() {
  if (!func.getBody().hasOneBlock())
    return func.emitError("host lowering: function '")
           << func.getSymName() << "' must have a single block";
  if (failed(collectStorage()))
    return failure();
  assignOutputs();
  planTransients();

  OpBuilder builder(func);
  auto program = ProgramOp::create(builder, func.getLoc(), func.getSymName(),
                                   func.getFunctionType(), arenaSize);
  emitCommands(program);
  if (!channels.empty())
    program.setChannelsAttr(builder.getArrayAttr(channels));
  if (!windows.empty())
    program.setWindowsAttr(builder.getArrayAttr(windows));
  func.erase();
  return success();
}

namespace {
struct BuildCommandProgramsPass
    : kiln::impl::BuildCommandProgramsPassBase<BuildCommandProgramsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (arenaAlignment <= 0 || (arenaAlignment & (arenaAlignment - 1)) != 0) {
      module.emitError("arena alignment must be a power of two, got ")
          << arenaAlignment;
      return signalPassFailure();
    }
    llvm::StringMap<unsigned> rodataIndex;
    unsigned count = 0;
    for (RodataOp rodata : module.getOps<RodataOp>())
      rodataIndex[rodata.getSymName()] = count++;
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp func : functions)
      if (failed(ProgramBuilder(func, rodataIndex, arenaAlignment).build()))
        return signalPassFailure();
  }
};
} // namespace
