//===- KilnAttrs.cpp - Kiln dialect attributes ----------------------------===//
// The strategy attributes' parameter syntax and their verifiers.

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::kiln;

FailureOr<SmallVector<int64_t>> mlir::kiln::parseSizeList(AsmParser &parser) {
  SmallVector<int64_t> sizes;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parser.parseInteger(sizes.emplace_back());
      }))
    return failure();
  return sizes;
}

void mlir::kiln::printSizeList(AsmPrinter &printer, ArrayRef<int64_t> sizes) {
  printer << '[';
  llvm::interleaveComma(sizes, printer);
  printer << ']';
}

FailureOr<bool> mlir::kiln::parseFlag(AsmParser &parser) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  if (keyword == "true" || keyword == "false")
    return keyword == "true";
  return parser.emitError(loc, "expected 'true' or 'false'");
}

FailureOr<std::optional<MatrixIntrinsic>>
mlir::kiln::parseMatrixIntrinsic(AsmParser &parser) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  if (std::optional<MatrixIntrinsic> intrinsic =
          symbolizeMatrixIntrinsic(keyword))
    return std::optional<MatrixIntrinsic>(intrinsic);
  return parser.emitError(loc, "unknown matrix intrinsic '") << keyword << "'";
}

// Structural rules only: which parameters each kind of kernel needs and
// their ranges. Whether a tiling fits the kernel's op and the chip is for
// the passes that lower it to say.
LogicalResult GPUStrategyAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, KernelKind kind,
    int64_t workgroupSize, int64_t subgroupSize,
    ArrayRef<int64_t> workgroupTile, int64_t workgroupCount, int64_t threadTile,
    GPUReduction reduction, int64_t reductionVector,
    std::optional<MatrixIntrinsic> intrinsic, ArrayRef<int64_t> subgroupGrid,
    ArrayRef<int64_t> simtTile, int64_t kTile, int64_t pipelineDepth,
    bool layoutFragments, int64_t queryRows, bool qInShared) {
  auto positive = [&](StringRef name, int64_t value) -> LogicalResult {
    if (value >= 1)
      return success();
    return emitError() << name << " must be positive, got " << value;
  };
  if (failed(positive("workgroup_size", workgroupSize)) ||
      failed(positive("subgroup_size", subgroupSize)) ||
      failed(positive("workgroup_count", workgroupCount)) ||
      failed(positive("thread_tile", threadTile)) ||
      failed(positive("reduction_vector", reductionVector)))
    return failure();
  if (llvm::any_of(workgroupTile, [](int64_t t) { return t < 0; }))
    return emitError() << "workgroup_tile sizes must not be negative";
  if (kTile < 0 || pipelineDepth < 0 || queryRows < 0)
    return emitError()
           << "k_tile, pipeline_depth and query_rows must not be negative";
  for (auto [name, list] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"subgroup_grid", subgroupGrid},
        {"simt_tile", simtTile}}) {
    if (!list.empty() && (list.size() != 2 || list[0] < 1 || list[1] < 1))
      return emitError() << name << " must be two positive sizes (M, N)";
  }

  bool contraction = kind == KernelKind::Contraction;
  bool attention = kind == KernelKind::Attention;
  if (contraction) {
    bool matrix = intrinsic && !subgroupGrid.empty() && simtTile.empty();
    bool simt = !intrinsic && subgroupGrid.empty() && !simtTile.empty();
    if (!matrix && !simt)
      return emitError() << "a contraction strategy needs either an "
                            "intrinsic with a subgroup_grid, or a simt_tile";
    if (workgroupTile.empty() || kTile == 0)
      return emitError()
             << "a contraction strategy needs a workgroup_tile and a k_tile";
  } else if (attention) {
    if (!intrinsic || queryRows == 0 || kTile == 0)
      return emitError() << "an attention strategy needs an intrinsic, "
                            "query_rows and a k_tile";
  } else if (intrinsic || !subgroupGrid.empty() || !simtTile.empty() ||
             kTile != 0 || pipelineDepth != 0) {
    return emitError() << "intrinsic, subgroup_grid, simt_tile, k_tile and "
                          "pipeline_depth belong to contraction and "
                          "attention strategies";
  }
  if (layoutFragments && !(contraction && intrinsic))
    return emitError()
           << "layout_fragments needs a contraction strategy with an intrinsic";
  if ((queryRows != 0 || qInShared) && !attention)
    return emitError()
           << "query_rows and q_in_shared belong to attention strategies";
  return success();
}

LogicalResult
HostStrategyAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         KernelKind kind, StringRef root,
                         ArrayRef<int64_t> tileSizes,
                         ArrayRef<int64_t> workgroupCount, int64_t vectorWidth,
                         ArrayRef<int64_t> vectorSizes) {
  switch (kind) {
  case KernelKind::Single:
  case KernelKind::Elementwise:
  case KernelKind::Reduction:
  case KernelKind::Matmul:
  case KernelKind::Conv:
    break;
  default:
    return emitError() << "a host strategy's kind is single, elementwise, "
                          "reduction, matmul or conv, not "
                       << stringifyKernelKind(kind);
  }
  if (llvm::any_of(tileSizes, [](int64_t t) { return t < 0; }))
    return emitError() << "tile_sizes must not be negative";
  if (llvm::count_if(tileSizes, [](int64_t t) { return t > 0; }) > 3)
    return emitError() << "a host strategy tiles at most three loops";
  if (workgroupCount.size() != 3 ||
      llvm::any_of(workgroupCount, [](int64_t c) { return c < 1; }))
    return emitError() << "workgroup_count must be three positive sizes";
  if (vectorWidth < 0)
    return emitError() << "vector_width must not be negative";
  if (llvm::any_of(vectorSizes, [](int64_t s) { return s < 1; }))
    return emitError() << "vector_sizes must be positive";
  if (!vectorSizes.empty() && root.empty())
    return emitError() << "vector_sizes need the root op they tile";
  return success();
}
