"""Writes the weights of load_time_mlp.mlir into numpy archives, an input
and numpy's result.

    make_mlp_parameters.py DIR

DIR/all.npz (np.savez_compressed) and DIR/stored.npz (np.savez) hold every
weight; DIR/layer1.npz and DIR/layer2.npz split them between two archives.
DIR/x.npy is the input, DIR/expected.npy numpy's output.
"""
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(17)
weights = {
    "layer1.weight": rng.uniform(-1, 1, (64, 128)).astype(np.float32),
    "layer1.bias": rng.uniform(-1, 1, 128).astype(np.float32),
    "layer2.weight": rng.uniform(-1, 1, (128, 16)).astype(np.float32),
    "layer2.scale": rng.uniform(0.5, 2, 16).astype(np.float16),
}
x = rng.uniform(-1, 1, (8, 64)).astype(np.float32)
np.savez_compressed(f"{out}/all.npz", **weights)
np.savez(f"{out}/stored.npz", **weights)
np.savez(f"{out}/layer1.npz",
         **{k: v for k, v in weights.items() if k.startswith("layer1")})
np.savez_compressed(f"{out}/layer2.npz",
                    **{k: v for k, v in weights.items() if k.startswith("layer2")})
np.save(f"{out}/x.npy", x)
h = np.maximum(x @ weights["layer1.weight"] + weights["layer1.bias"], 0)
y = (h @ weights["layer2.weight"]) * weights["layer2.scale"].astype(np.float32)
np.save(f"{out}/expected.npy", y.astype(np.float32))
