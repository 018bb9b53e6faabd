// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-form-dispatch-regions))' | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// The matmul is the root; the bias add + relu consumer joins it. The fill of
// an empty tensor is a cheap producer: it stays outside, for outlining to
// clone.
// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK:       %[[FILL:.+]] = linalg.fill
// CHECK:       %[[R:.+]] = kiln.dispatch_region -> (tensor<4x16xf32>) {
// CHECK-NEXT:    %[[MM:.+]] = linalg.matmul {{.*}} outs(%[[FILL]]
// CHECK-NEXT:    %[[G:.+]] = linalg.generic {{.*}} ins(%[[MM]], %{{.+}} :
// CHECK:         kiln.yield %[[G]] : tensor<4x16xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  return %[[R]]
func.func @matmul_bias_relu(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %m = arith.maximumf %s, %cst : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// An elementwise producer used only by the root joins the root's group (a
// transpose feeding a row sum).
// CHECK-LABEL: func.func @producer_fusion
// CHECK:       kiln.dispatch_region
// CHECK-NEXT:    linalg.generic
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      linalg.yield
// CHECK-NEXT:    } -> tensor<8x4xf32>
// CHECK-NEXT:    linalg.reduce
// CHECK:         kiln.yield
// CHECK-NOT:   kiln.dispatch_region
func.func @producer_fusion(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e2 : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.reduce ins(%t : tensor<8x4xf32>) outs(%f : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// Contractions take no producers: a kernel's blocks each read a whole K
// panel of the operands, which a fused producer would materialize per
// block. The transpose feeding the matmul is its own kernel.
// CHECK-LABEL: func.func @no_producers_into_contractions
// CHECK:       kiln.dispatch_region
// CHECK-NEXT:    linalg.generic
// CHECK:         kiln.yield
// CHECK:       kiln.dispatch_region
// CHECK-NEXT:    linalg.matmul
// CHECK-NEXT:    kiln.yield
func.func @no_producers_into_contractions(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e2 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %mm = linalg.matmul ins(%t, %x : tensor<8x4xf32>, tensor<4x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %mm : tensor<8x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A consumer joins the latest group it may: the elementwise op reads both
// matmuls, and the second matmul reads %mm before the elementwise op, so
// %mm's region cannot take it (it would have to yield %mm after the second
// matmul). It joins the second matmul's region, where %mm is an operand.
// CHECK-LABEL: func.func @consumer_joins_latest
// CHECK:       %[[A:.+]] = kiln.dispatch_region
// CHECK-NEXT:    linalg.matmul
// CHECK-NEXT:    kiln.yield
// CHECK:       %[[B:.+]] = kiln.dispatch_region
// CHECK-NEXT:    %[[MM2:.+]] = linalg.matmul ins(%[[A]], %[[A]]
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[A]], %[[MM2]]
// CHECK:       return %[[B]]
func.func @consumer_joins_latest(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.matmul ins(%x, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm2 = linalg.matmul ins(%mm, %mm : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %mm2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// Tensor data ops are roots; shape-only aliases, dense constants and
// tensor.empty stay on the host. Dead ops form no region.
// CHECK-LABEL: func.func @tensor_roots
// CHECK:       kiln.dispatch_region
// CHECK-NEXT:    %{{.+}} = tensor.pad
// CHECK:       kiln.dispatch_region
// CHECK-NEXT:    tensor.extract_slice
// CHECK:       arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
// CHECK-NEXT:  tensor.expand_shape
// CHECK:       kiln.dispatch_region
// CHECK-NEXT:    tensor.concat
// CHECK:       tensor.collapse_shape
// CHECK-NOT:   kiln.dispatch_region
// CHECK:       tensor.extract_slice %{{.+}}[1, 0]
// CHECK-NEXT:  return
func.func @tensor_roots(%x: tensor<2x4xf32>) -> (tensor<4x6xf32>, tensor<8xf32>, tensor<3x4xf32>, tensor<1x4xf32>) {
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<2x4xf32> to tensor<4x6xf32>
  %s = tensor.extract_slice %x[0, 0] [1, 4] [1, 1] : tensor<2x4xf32> to tensor<1x4xf32>
  %k = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %ke = tensor.expand_shape %k [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
  %c = tensor.concat dim(0) %x, %ke : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %dead = tensor.extract_slice %x[1, 0] [1, 4] [1, 1] : tensor<2x4xf32> to tensor<1x4xf32>
  return %p, %flat, %c, %s : tensor<4x6xf32>, tensor<8xf32>, tensor<3x4xf32>, tensor<1x4xf32>
}

// -----

// A pad takes no elementwise producer: its tiles read parts of the source
// whose size depends on their position, so a fused producer's tile would
// have a dynamic shape (a relu before a padded convolution did not compile
// for GPUs). The relu is its own dispatch, the pad another.
// CHECK-LABEL: func.func @pad_of_relu
// CHECK:       %[[R:.+]] = kiln.dispatch_region
// CHECK-NEXT:    linalg.generic
// CHECK:       kiln.dispatch_region
// CHECK-NEXT:    tensor.pad %[[R]]
func.func @pad_of_relu(%x: tensor<2x4xf32>) -> tensor<4x6xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %cst : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %p = tensor.pad %r low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<2x4xf32> to tensor<4x6xf32>
  return %p : tensor<4x6xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// An elementwise op with no root around it forms its own region; a result
// used both inside and outside the group is yielded.
// CHECK-LABEL: func.func @elementwise_alone
// CHECK:       %[[R:.+]]:2 = kiln.dispatch_region -> (tensor<4xf32>, tensor<4xf32>)
// CHECK:       return %[[R]]#0, %[[R]]#1
func.func @elementwise_alone(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = math.exp %v : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Row fusion: the row max, exp(x - max) (reading the max broadcast along the
// row), the row sum over the same rows and the division form one dispatch
// with one result.
// CHECK-LABEL: func.func @softmax_rows
// CHECK-COUNT-1: kiln.dispatch_region
// CHECK-NOT:   kiln.dispatch_region
// CHECK:       kiln.yield %{{.+}} : tensor<4x64xf32>
func.func @softmax_rows(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%m0 : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x64xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<4x64xf32>, tensor<4xf32>) outs(%e2 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %0 = arith.subf %in, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x64xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<4x64xf32>) outs(%s0 : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<4x64xf32>, tensor<4xf32>) outs(%e2 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %0 = arith.divf %in, %s : f32
    linalg.yield %0 : f32
  } -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The row max is also a result: the fused chain would end in two results,
// so the groups stay as without row fusion (the reduction and its
// consumers by permutation only).
// CHECK-LABEL: func.func @reduction_also_returned
// CHECK:       kiln.dispatch_region -> (tensor<4xf32>)
// CHECK:       kiln.dispatch_region -> (tensor<4x64xf32>)
func.func @reduction_also_returned(%x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%m0 : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x64xf32>
  %sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<4x64xf32>, tensor<4xf32>) outs(%e2 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %0 = arith.subf %in, %m : f32
    linalg.yield %0 : f32
  } -> tensor<4x64xf32>
  return %sub, %max : tensor<4x64xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>

// A consumer over the rows' loops that reads a full-rank group value
// transposed needs other rows' values: it does not join.
// CHECK-LABEL: func.func @transposed_read_does_not_join
// CHECK:       kiln.dispatch_region -> (tensor<8x8xf32>)
// CHECK:       kiln.dispatch_region -> (tensor<8x8xf32>)
func.func @transposed_read_does_not_join(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x8xf32>) outs(%m0 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8x8xf32>
  %sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<8x8xf32>, tensor<8xf32>) outs(%e2 : tensor<8x8xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %0 = arith.subf %in, %m : f32
    linalg.yield %0 : f32
  } -> tensor<8x8xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sub : tensor<8x8xf32>) outs(%e2 : tensor<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<8x8xf32>
  return %t : tensor<8x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// An f16 input widened once and read by both the row max and the
// subtraction: once the chain is fused, all its users are in the group, so
// it joins too (one dispatch, reading f16).
// CHECK-LABEL: func.func @widened_rows
// CHECK:       kiln.dispatch_region -> (tensor<4x64xf32>) {
// CHECK-NEXT:    linalg.generic
// CHECK-SAME:      ins(%{{.+}} : tensor<4x64xf16>)
// CHECK-NOT:   kiln.dispatch_region
// CHECK:       return
func.func @widened_rows(%x: tensor<4x64xf16>) -> tensor<4x64xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<4x64xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x64xf16>) outs(%e2 : tensor<4x64xf32>) {
  ^bb0(%in: f16, %o: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<4x64xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%w : tensor<4x64xf32>) outs(%m0 : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %sub = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %max : tensor<4x64xf32>, tensor<4xf32>) outs(%e2 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %0 = arith.subf %in, %m : f32
    linalg.yield %0 : f32
  } -> tensor<4x64xf32>
  return %sub : tensor<4x64xf32>
}

// -----

// A consumer that reads a matmul's result transposed does not join the
// matmul's dispatch (contraction kernels hand each result element to their
// consumer where it was computed); it gets its own.
// CHECK-LABEL: func.func @matmul_then_transpose
// CHECK:       kiln.dispatch_region
// CHECK:         linalg.matmul
// CHECK-NOT:     linalg.generic
// CHECK:         kiln.yield
// CHECK:       kiln.dispatch_region
// CHECK-NEXT:    linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel"]
#tr = affine_map<(d0, d1) -> (d1, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @matmul_then_transpose(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<16x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %et = tensor.empty() : tensor<16x4xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<4x16xf32>) outs(%et : tensor<16x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<16x4xf32>
  return %t : tensor<16x4xf32>
}

// -----

// Nor does a consumer that reads the loop indices (a causal mask on
// attention scores): the contraction epilogue computes no indices.
// CHECK-LABEL: func.func @matmul_then_mask
// CHECK:       kiln.dispatch_region
// CHECK:         linalg.matmul
// CHECK-NOT:     linalg.index
// CHECK:         kiln.yield
// CHECK:       kiln.dispatch_region
// CHECK-NEXT:    linalg.generic
// CHECK:           linalg.index 1
#id2m = affine_map<(d0, d1) -> (d0, d1)>
func.func @matmul_then_mask(%x: tensor<16x8xf32>, %w: tensor<8x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %minf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<16x8xf32>, tensor<8x16xf32>) outs(%f : tensor<16x16xf32>) -> tensor<16x16xf32>
  %em = tensor.empty() : tensor<16x16xf32>
  %m = linalg.generic {indexing_maps = [#id2m, #id2m], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<16x16xf32>) outs(%em : tensor<16x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %after = arith.cmpi ugt, %j, %i : index
    %r = arith.select %after, %minf, %in : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  return %m : tensor<16x16xf32>
}
