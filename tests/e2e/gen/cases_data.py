"""Data movement: gather, concat / slices / pad, reshapes."""

import numpy as np

from e2elib import Case, Run, T

rng = np.random.default_rng(3)
CASES = []


def f32(*shape):
    return rng.uniform(-3, 3, size=shape).astype(np.float32)


# ---------------------------------------------------------------- gather
table = f32(6, 4)
idx = np.array([4, 0, 5, 4, 2])
CASES.append(Case(
    "gather/gather_rows_generic_f32.mlir",
    "Embedding-style row gather: linalg.generic over an i32 index tensor with tensor.extract (repeated index).",
    """func.func @main(%table: tensor<6x4xf32>, %idx: tensor<5xi32>) -> tensor<5x4xf32> {
  %e = tensor.empty() : tensor<5x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%idx : tensor<5xi32>) outs(%e : tensor<5x4xf32>) {
  ^bb0(%k: i32, %o: f32):
    %row = arith.index_cast %k : i32 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<6x4xf32>
    linalg.yield %v : f32
  } -> tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}""",
    [Run("main", [T(table, "f32"), T(idx, "i32")], [T(table[idx], "f32")])]))

data = rng.integers(-1000, 1000, size=(10,))
idx = np.array([[9, 0, 3], [3, 3, 7]])
CASES.append(Case(
    "gather/gather_1d_i64_index.mlir",
    "Gather from a 1-D i32 tensor with a 2-D i64 index tensor, then add 1 (fused elementwise).",
    """func.func @main(%data: tensor<10xi32>, %idx: tensor<2x3xi64>) -> tensor<2x3xi32> {
  %one = arith.constant 1 : i32
  %e = tensor.empty() : tensor<2x3xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%idx : tensor<2x3xi64>) outs(%e : tensor<2x3xi32>) {
  ^bb0(%k: i64, %o: i32):
    %p = arith.index_cast %k : i64 to index
    %v = tensor.extract %data[%p] : tensor<10xi32>
    %w = arith.addi %v, %one : i32
    linalg.yield %w : i32
  } -> tensor<2x3xi32>
  return %r : tensor<2x3xi32>
}""",
    [Run("main", [T(data, "i32"), T(idx, "i64")], [T(data[idx] + 1, "i32")])]))

# ---------------------------------------------------------------- slicing
a, b = f32(2, 3), f32(2, 2)
CASES.append(Case(
    "slicing/concat_f32.mlir",
    "tensor.concat along dim 1: 2x3 ++ 2x2 -> 2x5.",
    """func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) -> tensor<2x5xf32> {
  %r = tensor.concat dim(1) %a, %b : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
  return %r : tensor<2x5xf32>
}""",
    [Run("main", [T(a, "f32"), T(b, "f32")], [T(np.concatenate([a, b], axis=1), "f32")])]))

a, b, c = (rng.integers(-50, 50, size=(n, 3)) for n in (1, 2, 3))
CASES.append(Case(
    "slicing/concat3_dim0_i32.mlir",
    "tensor.concat of three i32 tensors along dim 0: 1x3 ++ 2x3 ++ 3x3 -> 6x3.",
    """func.func @main(%a: tensor<1x3xi32>, %b: tensor<2x3xi32>, %c: tensor<3x3xi32>) -> tensor<6x3xi32> {
  %r = tensor.concat dim(0) %a, %b, %c : (tensor<1x3xi32>, tensor<2x3xi32>, tensor<3x3xi32>) -> tensor<6x3xi32>
  return %r : tensor<6x3xi32>
}""",
    [Run("main", [T(a, "i32"), T(b, "i32"), T(c, "i32")], [T(np.concatenate([a, b, c]), "i32")])]))

x = f32(6, 8)
CASES.append(Case(
    "slicing/extract_slice_strided_f32.mlir",
    "tensor.extract_slice with offsets [1, 2], sizes [3, 3], strides [2, 2] of a 6x8 tensor.",
    """func.func @main(%x: tensor<6x8xf32>) -> tensor<3x3xf32> {
  %r = tensor.extract_slice %x[1, 2] [3, 3] [2, 2] : tensor<6x8xf32> to tensor<3x3xf32>
  return %r : tensor<3x3xf32>
}""",
    [Run("main", [T(x, "f32")], [T(x[1:7:2, 2:8:2], "f32")])]))

x = f32(4, 6)
CASES.append(Case(
    "slicing/extract_slice_compute_f32.mlir",
    "Rank-reducing tensor.extract_slice of one row, then an elementwise op on the slice.",
    """func.func @main(%x: tensor<4x6xf32>) -> tensor<6xf32> {
  %row = tensor.extract_slice %x[2, 0] [1, 6] [1, 1] : tensor<4x6xf32> to tensor<6xf32>
  %e = tensor.empty() : tensor<6xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%row : tensor<6xf32>) outs(%e : tensor<6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %0 = arith.mulf %v, %v : f32
    linalg.yield %0 : f32
  } -> tensor<6xf32>
  return %r : tensor<6xf32>
}""",
    [Run("main", [T(x, "f32")], [T(x[2] * x[2], "f32")])]))

dst, src = f32(4, 5), f32(2, 3)
ref = dst.copy()
ref[1:3, 1:4] = src
CASES.append(Case(
    "slicing/insert_slice_f32.mlir",
    "tensor.insert_slice of a 2x3 tensor into a 4x5 input at [1, 1].",
    """func.func @main(%dst: tensor<4x5xf32>, %src: tensor<2x3xf32>) -> tensor<4x5xf32> {
  %r = tensor.insert_slice %src into %dst[1, 1] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}""",
    [Run("main", [T(dst, "f32"), T(src, "f32")], [T(ref, "f32")])]))

x = f32(2, 3)
CASES.append(Case(
    "slicing/pad_f32.mlir",
    "tensor.pad of 2x3 with low [1, 0], high [2, 3] and value 7.5 -> 5x6.",
    """func.func @main(%x: tensor<2x3xf32>) -> tensor<5x6xf32> {
  %cst = arith.constant 7.5 : f32
  %r = tensor.pad %x low[1, 0] high[2, 3] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<2x3xf32> to tensor<5x6xf32>
  return %r : tensor<5x6xf32>
}""",
    [Run("main", [T(x, "f32")], [T(np.pad(x, ((1, 2), (0, 3)), constant_values=7.5), "f32")])]))

x = rng.integers(-9, 9, size=(3,))
CASES.append(Case(
    "slicing/pad_i8.mlir",
    "tensor.pad on i8 with low 2, high 1, value -1.",
    """func.func @main(%x: tensor<3xi8>) -> tensor<6xi8> {
  %cst = arith.constant -1 : i8
  %r = tensor.pad %x low[2] high[1] {
  ^bb0(%i: index):
    tensor.yield %cst : i8
  } : tensor<3xi8> to tensor<6xi8>
  return %r : tensor<6xi8>
}""",
    [Run("main", [T(x, "i8")], [T(np.pad(x, (2, 1), constant_values=-1), "i8")])]))

# ---------------------------------------------------------------- reshape
x = f32(2, 3, 4)
CASES.append(Case(
    "reshape/collapse_shape_f32.mlir",
    "tensor.collapse_shape 2x3x4 -> 6x4, then add 1.",
    """func.func @main(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %one = arith.constant 1.0 : f32
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %e = tensor.empty() : tensor<6x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<6x4xf32>) outs(%e : tensor<6x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %0 = arith.addf %v, %one : f32
    linalg.yield %0 : f32
  } -> tensor<6x4xf32>
  return %r : tensor<6x4xf32>
}""",
    [Run("main", [T(x, "f32")], [T(x.reshape(6, 4) + 1, "f32")])]))

x = rng.integers(-100, 100, size=(12,))
CASES.append(Case(
    "reshape/expand_shape_i32.mlir",
    "tensor.expand_shape 12 -> 3x4 returned directly (a pure reshape).",
    """func.func @main(%x: tensor<12xi32>) -> tensor<3x4xi32> {
  %r = tensor.expand_shape %x [[0, 1]] output_shape [3, 4] : tensor<12xi32> into tensor<3x4xi32>
  return %r : tensor<3x4xi32>
}""",
    [Run("main", [T(x, "i32")], [T(x.reshape(3, 4), "i32")])]))

x = f32(4, 6)
CASES.append(Case(
    "reshape/reshape_roundtrip_f32.mlir",
    "collapse 4x6 -> 24, elementwise, expand 24 -> 2x3x4 (reshapes around a dispatch).",
    """func.func @main(%x: tensor<4x6xf32>) -> tensor<2x3x4xf32> {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  %e = tensor.empty() : tensor<24xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%c : tensor<24xf32>) outs(%e : tensor<24xf32>) {
  ^bb0(%v: f32, %o: f32):
    %0 = arith.mulf %v, %v : f32
    %1 = arith.subf %0, %v : f32
    linalg.yield %1 : f32
  } -> tensor<24xf32>
  %r = tensor.expand_shape %m [[0, 1, 2]] output_shape [2, 3, 4] : tensor<24xf32> into tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}""",
    [Run("main", [T(x, "f32")], [T((x * x - x).reshape(2, 3, 4), "f32")])]))
