// RUN: kiln-opt %s --split-input-file --kiln-define-integer-division | FileCheck %s

// Signed division: the divisor becomes 1 where it is 0 or where INT_MIN is
// divided by -1; division by zero then gives -1.
// CHECK-LABEL: func.func @divsi
// CHECK-SAME: (%[[X:.*]]: i32, %[[Y:.*]]: i32)
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: %[[BYZERO:.*]] = arith.cmpi eq, %[[Y]], %[[ZERO]]
// CHECK: %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK: %[[M1:.*]] = arith.constant -1 : i32
// CHECK: %[[ISM1:.*]] = arith.cmpi eq, %[[Y]], %[[M1]]
// CHECK: %[[ISMIN:.*]] = arith.cmpi eq, %[[X]], %[[MIN]]
// CHECK: %[[OVF:.*]] = arith.andi %[[ISMIN]], %[[ISM1]]
// CHECK: %[[UNSAFE:.*]] = arith.ori %[[BYZERO]], %[[OVF]]
// CHECK: %[[D:.*]] = arith.select %[[UNSAFE]], %[[ONE]], %[[Y]]
// CHECK: %[[Q:.*]] = arith.divsi %[[X]], %[[D]]
// CHECK: %[[ALL:.*]] = arith.constant -1 : i32
// CHECK: %[[R:.*]] = arith.select %[[BYZERO]], %[[ALL]], %[[Q]]
// CHECK: return %[[R]]
func.func @divsi(%x: i32, %y: i32) -> i32 {
  %0 = arith.divsi %x, %y : i32
  return %0 : i32
}

// -----

// Unsigned remainder on vectors: x % 0 = x.
// CHECK-LABEL: func.func @remui_vector
// CHECK-SAME: (%[[X:.*]]: vector<4xi16>, %[[Y:.*]]: vector<4xi16>)
// CHECK: %[[BYZERO:.*]] = arith.cmpi eq, %[[Y]], %{{.*}} : vector<4xi16>
// CHECK: %[[D:.*]] = arith.select %[[BYZERO]], %{{.*}}, %[[Y]] : vector<4xi1>, vector<4xi16>
// CHECK: %[[R:.*]] = arith.remui %[[X]], %[[D]]
// CHECK: arith.select %[[BYZERO]], %[[X]], %[[R]]
func.func @remui_vector(%x: vector<4xi16>, %y: vector<4xi16>) -> vector<4xi16> {
  %0 = arith.remui %x, %y : vector<4xi16>
  return %0 : vector<4xi16>
}

// -----

// Constant divisors that cannot trap are left alone; a ceildiv is expanded
// and its division defined.
// CHECK-LABEL: func.func @constants
// CHECK: arith.divui %{{.*}}, %c16
// CHECK-NOT: arith.select
// CHECK: return
func.func @constants(%x: index) -> index {
  %c16 = arith.constant 16 : index
  %0 = arith.divui %x, %c16 : index
  return %0 : index
}
// CHECK-LABEL: func.func @ceildiv
// CHECK: arith.cmpi eq
// CHECK: arith.select
// CHECK: arith.divsi
func.func @ceildiv(%x: i64, %y: i64) -> i64 {
  %0 = arith.ceildivsi %x, %y : i64
  return %0 : i64
}

// -----

// Index divisions by a value (workgroup tile arithmetic) are defined the
// same way, at the index type's 64 bits.
// CHECK-LABEL: func.func @index_divisor
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[BY_ZERO:.*]] = arith.cmpi eq, %[[Y:.*]], %[[ZERO]] : index
// CHECK: %[[SAFE:.*]] = arith.select %[[BY_ZERO]], %[[ONE]], %[[Y]] : index
// CHECK: %[[Q:.*]] = arith.divui %{{.*}}, %[[SAFE]] : index
// CHECK: %[[ALL:.*]] = arith.constant -1 : index
// CHECK: arith.select %[[BY_ZERO]], %[[ALL]], %[[Q]] : index
func.func @index_divisor(%x: index, %y: index) -> index {
  %q = arith.divui %x, %y : index
  return %q : index
}
