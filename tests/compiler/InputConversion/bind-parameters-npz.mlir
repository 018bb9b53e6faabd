// Parameters from numpy .npz archives (np.savez: stored members;
// np.savez_compressed: deflated; the zip64 directory of archives over 4
// GiB), and every way such an archive can be unusable, each a located
// error.
// RUN: split-file %s %t
// RUN: %python %S/../Inputs/make_npz.py %t/p.npz 'w:<f4:2x3:1,2,3,4,5,6' 'b:<f2:3:0.5,1,2' 'n:<i4:scalar:7' 'u:|u1:2:200,7'
// RUN: kiln-opt --kiln-bind-parameters="parameters-file=%t/p.npz" %t/ok.mlir | FileCheck %s
// RUN: %python %S/../Inputs/make_npz.py %t/z.npz --compressed 'w:<f4:2x3:1,2,3,4,5,6' 'b:<f2:3:0.5,1,2' 'n:<i4:scalar:7' 'u:|u1:2:200,7'
// RUN: kiln-opt --kiln-bind-parameters="parameters-file=%t/z.npz" %t/ok.mlir | FileCheck %s
// RUN: %python %S/../Inputs/make_npz.py %t/z64.npz --zip64 --compressed 'w:<f4:2x3:1,2,3,4,5,6' 'b:<f2:3:0.5,1,2' 'n:<i4:scalar:7' 'u:|u1:2:200,7'
// RUN: kiln-opt --kiln-bind-parameters="parameters-file=%t/z64.npz" %t/ok.mlir | FileCheck %s
// RUN: not kiln-opt --kiln-bind-parameters="parameters-file=%t/p.npz" %t/bad.mlir 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: %python %S/../Inputs/make_npz.py %t/fortran.npz 'w:<f4,F:2x3:1,2,3,4,5,6'
// RUN: not kiln-opt --kiln-bind-parameters="parameters-file=%t/fortran.npz" %t/ok.mlir 2>&1 | FileCheck %s --check-prefix=FORTRAN
// RUN: %python %S/../Inputs/make_npz.py %t/big.npz 'w:>f4:2x3:1,2,3,4,5,6'
// RUN: not kiln-opt --kiln-bind-parameters="parameters-file=%t/big.npz" %t/ok.mlir 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: %python %S/../Inputs/make_npz.py %t/complex.npz 'w:<c8:2x3:1,2,3,4,5,6'
// RUN: not kiln-opt --kiln-bind-parameters="parameters-file=%t/complex.npz" %t/ok.mlir 2>&1 | FileCheck %s --check-prefix=COMPLEX
// RUN: %python %S/../Inputs/make_npz.py %t/crc.npz --corrupt 'w:<f4:2x3:1,2,3,4,5,6' 'b:<f2:3:0.5,1,2'
// RUN: not kiln-opt --kiln-bind-parameters="parameters-file=%t/crc.npz" %t/ok.mlir 2>&1 | FileCheck %s --check-prefix=CRC
// RUN: %python %S/../Inputs/make_npz.py %t/crcz.npz --compressed --corrupt 'w:<f4:2x3:1,2,3,4,5,6' 'b:<f2:3:0.5,1,2'
// RUN: not kiln-opt --kiln-bind-parameters="parameters-file=%t/crcz.npz" %t/ok.mlir 2>&1 | FileCheck %s --check-prefix=CRCZ
// RUN: %python %S/../Inputs/make_npz.py %t/cut.npz --truncate=200 'w:<f4:2x3:1,2,3,4,5,6' 'b:<f2:3:0.5,1,2'
// RUN: not kiln-opt --kiln-bind-parameters="parameters-file=%t/cut.npz" %t/ok.mlir 2>&1 | FileCheck %s --check-prefix=CUT
// RUN: printf 'PK\003\004 and then nothing' > %t/stub.npz
// RUN: not kiln-opt --kiln-bind-parameters="parameters-file=%t/stub.npz" %t/ok.mlir 2>&1 | FileCheck %s --check-prefix=STUB
// RUN: kiln-compile %t/ok.mlir --target=host --parameters=%t/z.npz -o %t/ok.vmfb
// RUN: kiln-run %t/ok.vmfb --function=main --input=2x3xf32=10,20,30,40,50,60 | FileCheck %s --check-prefix=RESULT
// REQUIRES: host-target, kiln-run

//--- ok.mlir
func.func @main(%x: tensor<2x3xf32>,
                %w: tensor<2x3xf32> {kiln.parameter = "w"},
                %b: tensor<3xf16> {kiln.parameter = "b"},
                %n: tensor<i32> {kiln.parameter = "n"},
                %u: tensor<2xi8> {kiln.parameter = "u"}) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.add ins(%x, %w : tensor<2x3xf32>, tensor<2x3xf32>)
                  outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// Unsigned bytes bind to a signless i8 argument as they are (200 = -56).
// CHECK-LABEL: func.func @main(%{{.*}}: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-DAG: arith.constant dense<7> : tensor<i32>
// CHECK-DAG: arith.constant dense<[-56, 7]> : tensor<2xi8>
// CHECK-DAG: arith.constant dense<[5.000000e-01, 1.000000e+00, 2.000000e+00]> : tensor<3xf16>
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK: linalg.add ins(%{{.*}}, %[[W]] :
// RESULT: 2x3xf32=[11 22 33][44 55 66]

//--- bad.mlir
func.func @absent(%a: tensor<2xf32> {kiln.parameter = "nope"}) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
func.func @dtype(%a: tensor<2x3xf16> {kiln.parameter = "w"}) -> tensor<2x3xf16> {
  return %a : tensor<2x3xf16>
}
func.func @shape(%a: tensor<3x2xf32> {kiln.parameter = "w"}) -> tensor<3x2xf32> {
  return %a : tensor<3x2xf32>
}
// BAD: bad.mlir:1:19: error: argument 0 of @absent (parameter 'nope'): the archive '{{.*}}p.npz' has no tensor of that name
// BAD: bad.mlir:4:18: error: argument 0 of @dtype (parameter 'w'): the archive holds F32 data, the argument is f16
// BAD: bad.mlir:7:18: error: argument 0 of @shape (parameter 'w'): the archive's tensor has shape [2x3], the argument 3x2
// FORTRAN: error: argument 1 of @main (parameter 'w'): parameter archive '{{.*}}fortran.npz' is not a valid .npz archive: member 'w.npy': it is in Fortran (column-major) order; save np.ascontiguousarray(a) instead
// BIG: parameter archive '{{.*}}big.npz' is not a valid .npz archive: member 'w.npy': its data are big-endian ('>f4')
// COMPLEX: member 'w.npy': its element type '<c8' is not one of numpy's integer, float or bool types
// CRC: member 'w.npy': its CRC-32 does not match its data (corrupted)
// CRCZ: member 'w.npy': {{(its deflated data do not inflate to its recorded [0-9]+ bytes|its CRC-32 does not match its data \(corrupted\))}}
// CUT: parameter archive '{{.*}}cut.npz' is not a valid .npz archive: it has no zip end-of-central-directory record (truncated?)
// STUB: parameter archive '{{.*}}stub.npz' is not a valid .npz archive: {{too short for a zip archive|it has no zip end-of-central-directory record \(truncated\?\)}}
