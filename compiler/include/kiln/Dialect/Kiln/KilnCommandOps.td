//===- KilnCommandOps.td - Kiln command program ops --------*- tablegen -*-===//
// Ops of the per-function command program produced by host lowering
// (memory planning) and serialized into the module. Included by KilnOps.td.
#ifndef KILN_DIALECT_KILN_COMMAND_OPS
#define KILN_DIALECT_KILN_COMMAND_OPS

#endif // KILN_DIALECT_KILN_COMMAND_OPS
