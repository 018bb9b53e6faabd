// kiln-dump --json: the module as one JSON object that a JSON parser reads,
// with the facts the text dump shows (a module name with quotes and a
// backslash is escaped).
// RUN: kiln-compile %s --target=host,rocm,cuda --module-name='m"q\x' -o %t.vmfb
// RUN: kiln-dump --json %t.vmfb > %t.json
// RUN: python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print(d['name']); print(d['functions'][0]); print(sorted(v['target'] for v in d['executables'][0]['variants'])); e = d['executables'][0]['variants'][0]['exports'][0]; print(e['workgroup_count'], e['bindings']); print(len(d['rodata']), d['size'] > 0)" %t.json | FileCheck %s
// REQUIRES: kiln-dump, host-target
// CHECK: m"q\x
// CHECK-NEXT: {'name': 'main', 'inputs': ['4xf32'], 'outputs': ['4xf32'], 'transient_bytes': 0, 'commands': 1}
// CHECK-NEXT: ['cuda:sm_90', 'host:x86_64', 'rocm:gfx942']
// CHECK-NEXT: [{{[0-9]+}}, 1, 1] 3
// CHECK-NEXT: 1 True

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.add ins(%x, %c : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
