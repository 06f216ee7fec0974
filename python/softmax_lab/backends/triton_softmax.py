"""`triton` and `triton_online`: this project's own Triton softmax kernels, forward and backward,
softmax and log-softmax, fp32 accumulation for every dtype.

  * fused (`triton`, rows up to FUSED_MAX columns): a program holds R whole rows in registers,
    so x is read once and y written once. The block is the row length rounded up to a power of
    two; short rows are packed R to a program so that each program has about 4K elements to
    work on, and the warp count grows with the tile. This is the fused-softmax tutorial's
    kernel, with the rows-per-program packing its short-row case needs.
  * online (`triton_online`, and `triton` past FUSED_MAX): one program per row walks the row in
    tiles of TILE elements keeping a running max and rescaled sum per lane, merges the lanes,
    then walks the row again to write: two reads and one write, for rows of any length.
    A lane whose running max is still -inf adds nothing (exp(-inf - -inf) would be NaN), so a
    row that starts with -inf logits is not turned into NaN; a NaN or +inf still is, as the
    contract requires.
  * backward: the same two shapes; the fused one reads y and dy once, the online one twice.

Launch settings are a fixed function of the row length (no autotuning: a timed run must not
time the tuner, and the same shape must always run the same code).
"""
import torch
import triton
import triton.language as tl

FUSED_MAX = 16384
TILE = 4096


@triton.jit
def _fwd_fused(x_ptr, y_ptr, rows, cols, ld, R: tl.constexpr, BLOCK: tl.constexpr, LOG: tl.constexpr):
    r = tl.program_id(0).to(tl.int64) * R + tl.arange(0, R)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    mask = (r < rows) & (c < cols)
    offs = r * ld + c
    x = tl.load(x_ptr + offs, mask=mask, other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=1)[:, None]
    z = x - m
    e = tl.exp(z)
    s = tl.sum(e, axis=1)[:, None]
    if LOG:
        y = z - tl.log(s)
    else:
        y = e / s
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _fwd_online(x_ptr, y_ptr, cols, ld, TILE_: tl.constexpr, LOG: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    xrow = x_ptr + row * ld
    yrow = y_ptr + row * ld
    offs = tl.arange(0, TILE_)
    m = tl.full([TILE_], -float("inf"), tl.float32)
    s = tl.zeros([TILE_], tl.float32)
    for start in range(0, cols, TILE_):
        c = start + offs
        x = tl.load(xrow + c, mask=c < cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        scale = tl.where(m_new == m, 1.0, tl.exp(m - m_new))
        term = tl.where(x == -float("inf"), 0.0, tl.exp(x - m_new))
        s = s * scale + term
        m = m_new
    M = tl.max(m, axis=0)
    S = tl.sum(s * tl.where(m == -float("inf"), 0.0, tl.exp(m - M)), axis=0)
    for start in range(0, cols, TILE_):
        c = start + offs
        mask = c < cols
        z = tl.load(xrow + c, mask=mask, other=0.0).to(tl.float32) - M
        if LOG:
            y = z - tl.log(S)
        else:
            y = tl.exp(z) / S
        tl.store(yrow + c, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _bwd_fused(y_ptr, dy_ptr, dx_ptr, rows, cols, ld, R: tl.constexpr, BLOCK: tl.constexpr,
               LOG: tl.constexpr):
    r = tl.program_id(0).to(tl.int64) * R + tl.arange(0, R)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    mask = (r < rows) & (c < cols)
    offs = r * ld + c
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if LOG:
        dx = dy - tl.exp(y) * tl.sum(dy, axis=1)[:, None]
    else:
        dx = y * (dy - tl.sum(dy * y, axis=1)[:, None])
    tl.store(dx_ptr + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _bwd_online(y_ptr, dy_ptr, dx_ptr, cols, ld, TILE_: tl.constexpr, LOG: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * ld
    offs = tl.arange(0, TILE_)
    acc = tl.zeros([TILE_], tl.float32)
    for start in range(0, cols, TILE_):
        c = start + offs
        mask = c < cols
        dy = tl.load(dy_ptr + row + c, mask=mask, other=0.0).to(tl.float32)
        if LOG:
            acc += dy
        else:
            acc += dy * tl.load(y_ptr + row + c, mask=mask, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=0)
    for start in range(0, cols, TILE_):
        c = start + offs
        mask = c < cols
        y = tl.load(y_ptr + row + c, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row + c, mask=mask, other=0.0).to(tl.float32)
        if LOG:
            dx = dy - tl.exp(y) * total
        else:
            dx = y * (dy - total)
        tl.store(dx_ptr + row + c, dx.to(dx_ptr.dtype.element_ty), mask=mask)


def _fused_settings(cols):
    """(rows per program, block, warps) for a row length: about 4K elements a program."""
    block = max(16, triton.next_power_of_2(cols))
    r = max(1, min(64, 4096 // block))
    elems = r * block
    warps = 4 if elems <= 2048 else 8 if elems <= 8192 else 16
    return r, block, warps


def _launch(op, x, dy, out, online):
    rows, cols = x.shape
    if rows == 0 or cols == 0:
        return
    ld = x.stride(0)
    log = op.startswith("log_")
    bwd = op.endswith("_bwd")
    if online:
        grid = (rows,)
        if bwd:
            _bwd_online[grid](x, dy, out, cols, ld, TILE_=TILE, LOG=log, num_warps=8)
        else:
            _fwd_online[grid](x, out, cols, ld, TILE_=TILE, LOG=log, num_warps=8)
        return
    r, block, warps = _fused_settings(cols)
    grid = (triton.cdiv(rows, r),)
    if bwd:
        _bwd_fused[grid](x, dy, out, rows, cols, ld, R=r, BLOCK=block, LOG=log, num_warps=warps)
    else:
        _fwd_fused[grid](x, out, rows, cols, ld, R=r, BLOCK=block, LOG=log, num_warps=warps)


def run(op, x, dy, out):
    _launch(op, x, dy, out, online=x.shape[1] > FUSED_MAX)


def run_online(op, x, dy, out):
    _launch(op, x, dy, out, online=True)


def kernels():
    mods = ("torch", "triton")
    return [
        ("triton", run, "all", "all",
         {"summary": "Triton: rows of up to %d columns fused in registers (one read, one write), "
                     "longer rows online in tiles" % FUSED_MAX,
          "claim": ("torch", 1.0, "all"), "mods": mods, "framework": True}),
        ("triton_online", run_online, "all", "all",
         {"summary": "Triton: online max/sum over tiles of %d, one program per row, two reads" % TILE,
          "claim": ("torch", 1.0, "long"), "mods": mods, "framework": True}),
    ]
