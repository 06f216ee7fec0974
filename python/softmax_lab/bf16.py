"""bfloat16 as numpy sees it: raw uint16 bits (numpy has no bf16). Conversions round to
nearest even and keep NaN a NaN."""
import numpy as np


def to_float32(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def from_float32(values):
    v = np.ascontiguousarray(values, dtype=np.float32)
    u = v.view(np.uint32)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(v)
    if nan.any():
        rounded = np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), rounded)
    return rounded
