// RUN: kiln-opt %s --split-input-file --kiln-verify-input-legality --verify-diagnostics | FileCheck %s

// Accepted: static tensors of every supported element type, rank 0, and ops
// of func/arith/math/linalg/tensor/tosa. The pass leaves them unchanged.
// CHECK-LABEL: func.func @accepted
// CHECK: linalg.generic
// CHECK: tosa.add
func.func @accepted(%a: tensor<4xf32>, %b: tensor<f32>, %c: tensor<2x3xi1>,
                    %d: tensor<8xi8>, %e: tensor<8xi16>, %f: tensor<8xi32>,
                    %g: tensor<8xi64>, %h: tensor<8xf16>, %i: tensor<8xbf16>,
                    %j: tensor<8xf64>) -> (tensor<4xf32>, tensor<4xf32>) {
  %empty = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %idx = linalg.index 0 : index
    %e2 = math.exp %x : f32
    linalg.yield %e2 : f32
  } -> tensor<4xf32>
  %t = tosa.add %a, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r, %t : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0 of function 'dynamic_arg' has type 'tensor<?x4xf32>': dynamic shapes are not supported}}
func.func @dynamic_arg(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %a : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{result #0 of function 'unranked_result' has type 'tensor<*xf32>': only static-shape ranked tensors are supported}}
func.func @unranked_result(%a: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{result #0 of 'tensor.cast' has type 'tensor<*xf32>': unranked tensors are not supported}}
  %c = tensor.cast %a : tensor<4xf32> to tensor<*xf32>
  return %c : tensor<*xf32>
}

// -----

// expected-error @+1 {{argument #0 of function 'scalar_arg' has type 'f32': only static-shape ranked tensors are supported (use a rank-0 tensor for a scalar)}}
func.func @scalar_arg(%a: f32) -> tensor<f32> {
  %t = tensor.from_elements %a : tensor<f32>
  return %t : tensor<f32>
}

// -----

// expected-error @+1 {{argument #0 of function 'bad_element' has type 'tensor<4xi4>': element type is not supported; supported: i1, i8, i16, i32, i64, f16, bf16, f32, f64}}
func.func @bad_element(%a: tensor<4xi4>) -> tensor<4xi4> {
  return %a : tensor<4xi4>
}

// -----

func.func @complex_inside(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result #0 of 'tensor.empty' has type 'tensor<4xcomplex<f32>>': element type is not supported}}
  %e = tensor.empty() : tensor<4xcomplex<f32>>
  return %a : tensor<4xf32>
}

// -----

func.func @control_flow(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{control flow is not supported: 'scf.for'}}
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %a) -> tensor<4xf32> {
    scf.yield %acc : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// expected-error @+1 {{function 'branches' has several blocks; control flow is not supported}}
func.func @branches(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{control flow is not supported: 'cf.br'}}
  cf.br ^bb1
^bb1:
  return %a : tensor<4xf32>
}

// -----

func.func private @callee(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
func.func @caller(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{function calls are not supported: 'func.call'; inline the callee into the calling function}}
  %r = func.call @callee(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @unsupported_dialect(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operation 'bufferization.alloc_tensor' is not supported; Kiln accepts ops of func (without func.call), arith, math, linalg, tensor and tosa}}
  %t = bufferization.alloc_tensor() : tensor<4xf32>
  return %t : tensor<4xf32>
}

// -----

// expected-error @+1 {{function 'declared' has no body; external functions are not supported}}
func.func private @declared(%a: tensor<4xf32>) -> tensor<4xf32>

// -----

func.func @tosa_control_flow(%c: tensor<i1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{control flow is not supported: 'tosa.cond_if'}}
  %r = tosa.cond_if %c (%x = %a) : tensor<i1> (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x2: tensor<4xf32>):
    tosa.yield %x2 : tensor<4xf32>
  } else {
  ^bb0(%y: tensor<4xf32>):
    tosa.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// SPMD programs: a static grid and the collectives Kiln lowers are legal.
shard.grid @grid(shape = 2x2)
func.func @collectives(%x: tensor<4x2xf32>, %b: tensor<4xi1>) -> (tensor<4x2xf32>, tensor<4x4xf32>, tensor<4xi1>) {
  %0 = shard.all_reduce %x on @grid grid_axes = [0, 1] reduction = average : tensor<4x2xf32> -> tensor<4x2xf32>
  %1 = shard.all_gather %0 on @grid grid_axes = [1] gather_axis = 1 : tensor<4x2xf32> -> tensor<4x4xf32>
  %2 = shard.broadcast %b on @grid grid_axes = [0] root = [1] : (tensor<4xi1>) -> tensor<4xi1>
  return %0, %1, %2 : tensor<4x2xf32>, tensor<4x4xf32>, tensor<4xi1>
}

// -----

// expected-error @+1 {{grid @grid must have a static shape: the number of ranks of a run is fixed when it starts}}
shard.grid @grid(shape = 2x?)

// -----

shard.grid @grid(shape = 2)
func.func @avg_int(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{reduction 'average' of 'shard.all_reduce' needs a float element type, got 'i32'; reduce with 'sum' and divide instead}}
  %0 = shard.all_reduce %x on @grid grid_axes = [0] reduction = average : tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

shard.grid @grid(shape = 2)
func.func @reduce_i1(%x: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{element type 'i1' of 'shard.all_reduce' is not supported; supported: i8, i16, i32, i64, f16, bf16, f32, f64}}
  %0 = shard.all_reduce %x on @grid grid_axes = [0] : tensor<4xi1> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

shard.grid @grid(shape = 2)
func.func @shift(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{shard op 'shard.shift' is not supported; Kiln lowers static shard.grid and shard.all_reduce, shard.all_gather, shard.reduce_scatter, shard.all_to_all and shard.broadcast}}
  %0 = shard.shift %x on @grid grid_axes = [0] shift_axis = 0 offset = 1 rotate : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @all_slice(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{shard op 'shard.all_slice' is not supported}}
  %0 = shard.all_slice %x on @grid grid_axes = [0] slice_axis = 0 : tensor<4xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @annotated(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{sharding annotation 'shard.sharding' must be partitioned first (kiln-partition-shards)}}
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{sharding annotation 'shard.shard' must be partitioned first (kiln-partition-shards)}}
  %0 = shard.shard %x to %s : tensor<4xf32>
  return %0 : tensor<4xf32>
}
