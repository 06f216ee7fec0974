"""The shared libraries and the C structs of softmax_lab.h, through ctypes.

Two libraries are loaded: libsoftmax_lab (the core: API, registry, kernels) and
libsoftmax_lab_cli (every `softmax-lab` subcommand as sml_cli_main). The CLI library links the
core, so the kernels registered here are the ones every subcommand sees.

Where the libraries are looked for, first hit wins:
  1. $SML_LIBRARY_DIR (an override);
  2. _lib/ of this package: where `pip install .` puts the libraries it built;
  3. build/lib, build-gpu/lib, build-cpu/lib of the source tree this package sits in
     (python/ beside CMakeLists.txt), for PYTHONPATH=python in a checkout;
  4. the lib/ folder beside the bin/ of a `softmax-lab` executable on $PATH (a prefix of
     `cmake --install`), or under the folder that holds it (a build tree).
"""
import ctypes
import os
import shutil

CORE = "libsoftmax_lab.so"
CLI = "libsoftmax_lab_cli.so"

# enum sml_device, sml_op, sml_dtype: the values of softmax_lab.h.
DEVICES = {"cpu": 0, "gpu": 1}
OPS = ["softmax", "log_softmax", "softmax_bwd", "log_softmax_bwd"]
DTYPES = ["fp32", "fp16", "bf16"]
# numpy / PyTorch names a user may write, mapped to the suite's.
DTYPE_ALIASES = {
    "fp32": "fp32", "float32": "fp32", "float": "fp32", "f32": "fp32",
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "f16": "fp16",
    "bf16": "bf16", "bfloat16": "bf16",
}


class Problem(ctypes.Structure):
    """struct sml_problem"""
    _fields_ = [
        ("op", ctypes.c_int),
        ("dtype", ctypes.c_int),
        ("rows", ctypes.c_int64),
        ("cols", ctypes.c_int64),
        ("ld", ctypes.c_int64),
        ("x", ctypes.c_void_p),
        ("dy", ctypes.c_void_p),
        ("out", ctypes.c_void_p),
        ("stream", ctypes.c_void_p),
    ]


LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(Problem))


class Claim(ctypes.Structure):
    """struct sml_claim"""
    _fields_ = [
        ("baseline", ctypes.c_char_p),
        ("min_speedup", ctypes.c_double),
        ("shapes", ctypes.c_char_p),
    ]


class Deviation(ctypes.Structure):
    """struct sml_deviation: a declared deviation from the numerics contract (per op and dtype a
    bound in ulps or a factor on the contract's bound, 0 for the contract; named exceptions)"""
    _fields_ = [
        ("ulps", (ctypes.c_double * 3) * 4),
        ("bound_factor", (ctypes.c_double * 3) * 4),
        ("exceptions", ctypes.c_uint),
    ]


# The SML_DEV_* exception bits of include/softmax_lab.h, by the names register() takes.
DEV_EXCEPTIONS = {"all_neg_inf_row": 1 << 0, "log_softmax_shift_bits": 1 << 1,
                  "bwd_16bit_overflow": 1 << 2, "lowest_max_row": 1 << 3,
                  "log_softmax_lse_rounded": 1 << 4, "row_bits_by_address": 1 << 5,
                  "bwd_sum_class": 1 << 6}


class Kernel(ctypes.Structure):
    """struct sml_kernel"""
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("file", ctypes.c_char_p),
        ("device", ctypes.c_int),
        ("ops", ctypes.c_uint),
        ("dtypes", ctypes.c_uint),
        ("min_cols", ctypes.c_int64),
        ("max_cols", ctypes.c_int64),
        ("launch", LAUNCH),
        ("summary", ctypes.c_char_p),
        ("claim", Claim),
        ("known_deviation", ctypes.c_char_p),
        ("flags", ctypes.c_uint),  # SML_KERNEL_* bits (plugin ABI version 2)
        ("deviation", ctypes.POINTER(Deviation)),  # NULL: the contract (plugin ABI version 3)
    ]


KERNEL_FRAMEWORK = 1 << 0  # SML_KERNEL_FRAMEWORK of include/softmax_lab.h


class LibraryNotFound(RuntimeError):
    pass


def _candidate_dirs():
    env = os.environ.get("SML_LIBRARY_DIR")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "_lib")
    tree = os.path.dirname(os.path.dirname(here))
    if os.path.exists(os.path.join(tree, "CMakeLists.txt")):
        for b in ("build", "build-gpu", "build-cpu"):
            yield os.path.join(tree, b, "lib")
    exe = shutil.which("softmax-lab")
    if exe and not _is_script(exe):
        bindir = os.path.dirname(os.path.realpath(exe))
        yield os.path.join(os.path.dirname(bindir), "lib")    # an installed prefix
        yield os.path.join(os.path.dirname(bindir), "lib64")
        yield os.path.join(bindir, "lib")                      # a build tree


def _is_script(path):
    """True for the console script pip writes (a text file), which is not the C binary."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return True


def find_library_dir():
    tried = []
    for d in _candidate_dirs():
        tried.append(d)
        if os.path.exists(os.path.join(d, CORE)) and os.path.exists(os.path.join(d, CLI)):
            return d
    raise LibraryNotFound(
        "softmax_lab: cannot find %s and %s (looked in: %s); install the package with "
        "`pip install .` from the source tree, or build it (cmake --preset default && "
        "cmake --build --preset default) and set SML_LIBRARY_DIR to its lib/"
        % (CORE, CLI, ", ".join(tried) or "nowhere"))


_libs = None


def libs():
    """(core, cli) ctypes.CDLL handles, loaded once. CDLL releases the GIL around every call,
    so the suite's worker threads can call back into Python kernels."""
    global _libs
    if _libs is None:
        d = find_library_dir()
        core = ctypes.CDLL(os.path.join(d, CORE), mode=ctypes.RTLD_GLOBAL)
        cli = ctypes.CDLL(os.path.join(d, CLI), mode=ctypes.RTLD_GLOBAL)
        core.sml_strerror.restype = ctypes.c_char_p
        core.sml_strerror.argtypes = [ctypes.c_int]
        core.sml_register_kernels.restype = ctypes.c_int
        core.sml_register_kernels.argtypes = [ctypes.POINTER(Kernel), ctypes.c_size_t, ctypes.c_uint,
                                              ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        core.sml_gpu_available.restype = ctypes.c_int
        core.sml_kernel_count.restype = ctypes.c_size_t
        core.sml_kernel_at.restype = ctypes.POINTER(Kernel)
        core.sml_kernel_at.argtypes = [ctypes.c_size_t]
        core.sml_version.restype = ctypes.c_char_p
        core.sml_kernel_origin.restype = ctypes.c_char_p
        core.sml_kernel_origin.argtypes = [ctypes.POINTER(Kernel)]
        core.sml_unregister_kernels.restype = ctypes.c_int
        core.sml_unregister_kernels.argtypes = [ctypes.POINTER(Kernel)]
        cli.sml_cli_main.restype = ctypes.c_int
        cli.sml_cli_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        _libs = (core, cli)
    return _libs


def library_dir():
    return find_library_dir()
