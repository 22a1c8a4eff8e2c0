"""Checks, in Python, a model Ringleader exported: what a PyTorch user does
with it. Run with Debian's /usr/bin/python3 (python3-torch, python3-numpy).

  check_export.py make MODEL.pt
      scripts a small residual CNN with BatchNorm (input [B, 3, 8, 8], five
      classes) for the worker to train and export.
  check_export.py check EXPORTED.pt WEIGHTS.safetensors INPUT.bin EXPECTED.bin
                        SHAPE [--eager]
      loads the TorchScript file with torch.jit.load and the safetensors file
      with the reader below, runs INPUT (raw float32, SHAPE like 4,3,8,8) and
      compares with EXPECTED (the worker's output, raw float32); with --eager
      also loads the weights into a fresh eager Net (load_state_dict, strict).
Prints OK and exits 0 when everything matches; otherwise says what differs.
"""
import json
import struct
import sys

import numpy as np
import torch

TOLERANCE = 1e-5  # Same ops, same fp32 kernels: only summation order differs.

DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16,
          "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
          "U8": np.uint8, "BOOL": np.bool_}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(3)
        self.fc = torch.nn.Linear(3 * 8 * 8, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)) + x)
        return self.fc(torch.flatten(y, 1))


def read_safetensors(path):
    """The safetensors format: u64 LE header size, JSON header, data."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    header.pop("__metadata__", None)
    tensors, end = {}, 0
    for name, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"]):
        begin, stop = info["data_offsets"]
        assert begin == end, f"{name}: data starts at {begin}, not {end}"
        array = np.frombuffer(data[begin:stop], dtype=DTYPES[info["dtype"]])
        tensors[name] = torch.from_numpy(array.reshape(info["shape"]).copy())
        end = stop
    assert end == len(data), f"data is {len(data)} bytes, tensors cover {end}"
    return tensors


def check(args):
    exported, weights, input_path, expected_path, shape = args[:5]
    shape = [int(d) for d in shape.split(",")]
    x = torch.from_numpy(np.fromfile(input_path, np.float32).reshape(shape))
    expected = torch.from_numpy(np.fromfile(expected_path, np.float32))
    model = torch.jit.load(exported)
    assert not model.training, "exported in training mode"
    with torch.no_grad():
        out = model(x).flatten()
    diff = (out - expected).abs().max().item()
    assert diff <= TOLERANCE, f"torch.jit.load output differs by {diff}"
    state = read_safetensors(weights)
    script_state = model.state_dict()
    assert set(state) == set(script_state), (sorted(state), sorted(script_state))
    for name, value in state.items():
        assert torch.equal(value, script_state[name]), f"{name} differs"
    if "--eager" in args:
        eager = Net()
        eager.load_state_dict(state, strict=True)
        eager.eval()
        with torch.no_grad():
            diff = (eager(x).flatten() - expected).abs().max().item()
        assert diff <= TOLERANCE, f"eager model output differs by {diff}"
    print("OK", len(state), "tensors, max |diff|", diff)


def main():
    if sys.argv[1] == "make":
        torch.manual_seed(0)
        torch.jit.script(Net()).save(sys.argv[2])
    else:
        check(sys.argv[2:])


if __name__ == "__main__":
    main()
