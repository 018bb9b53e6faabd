#!/bin/bash
# Nsight Compute kernel times (GPU machine): Kiln's softmax f16 1024x32768
# from a suite pack (gpu_suite.sh --pack build --only=softmax_f16_1024 PACK),
# torch's softmax on the same shape and torch's x * 1 over the same bytes.
#   benchmarks/gpu/ncu_softmax_f16.sh PACK
P=${1:?usage: ncu_softmax_f16.sh PACK}
python3 -c "import numpy as np; np.save('/tmp/x.npy', np.random.default_rng(1).standard_normal((1024,32768)).astype(np.float16))"
M="--clock-control none --section SpeedOfLight --section Occupancy --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum"
echo "=== kiln"
LD_LIBRARY_PATH=$P/lib timeout 120 ncu $M -k regex:main_dispatch -c 3 $P/bin/kiln-benchmark $P/modules/softmax_f16_1024x32768.vmfb --device=hip --plugin=$P/lib/libkiln_hal_hip.so --function=main --input=@/tmp/x.npy --warmup=1 --iterations=3 2>&1 | grep -E "gpu__time_duration|DRAM Throughput|Registers Per|Achieved Occ|dram__bytes"
cat > /tmp/t.py <<'PY'
import torch, sys
x = torch.randn(1024, 32768, dtype=torch.float16, device="cuda")
c = torch.randn(16 << 20, dtype=torch.float32, device="cuda")  # 64 MiB
for _ in range(3):
    torch.softmax(x, 1)
    torch.mul(c, 1.0)  # reads 64 MiB, writes 64 MiB: a copy as a kernel
torch.cuda.synchronize()
PY
echo "=== torch softmax"
timeout 120 ncu $M -k regex:SoftMax -c 3 python3 /tmp/t.py 2>&1 | grep -E "gpu__time_duration|DRAM Throughput|Registers Per|Achieved Occ|dram__bytes"
echo "=== torch x*1 (64 MiB -> 64 MiB)"
timeout 120 ncu $M -k regex:vectorized_elementwise -c 3 python3 /tmp/t.py 2>&1 | grep -E "gpu__time_duration|DRAM Throughput|dram__bytes"
