"""softmax_lab: the softmax-lab verification suite from Python.

    import softmax_lab as sl
    sl.register("mine", my_softmax, ops=["softmax"], dtypes=["fp16", "bf16"], device="gpu",
                claim=("torch", 1.0, "all"))
    sl.check(kernels=["mine"], cases=2000)              # the property suite
    sl.bench(backends=["mine", "torch", "auto"], rows=4096, cols=8192, dtype="bf16")
    sl.judge(x, y, "softmax")                           # an output made elsewhere
    sl.audit(out="audit")                               # every framework backend, --strict, findings

Every call runs the same C code as the `softmax-lab` command (through libsoftmax_lab_cli), and
`python -m softmax_lab` takes the same subcommands and flags, with the framework backends
(torch, triton, liger, numpy) added to `--backend all` / `--kernel all`.
"""
from ._register import register, registered, unregister
from .api import bench, check, judge, main, run_cli
from .auditing import audit
from .backends import register_all as register_backends

try:  # written by the CMake install of `pip install .`, from project(VERSION)
    from ._version import __version__
except ImportError:  # a source checkout on PYTHONPATH: the version of the library it loads
    def __getattr__(name):
        if name == "__version__":
            from . import _native
            return _native.libs()[0].sml_version().decode()
        raise AttributeError("module 'softmax_lab' has no attribute %r" % name)

__all__ = ["register", "registered", "unregister", "check", "bench", "judge", "audit", "main", "run_cli",
           "register_backends"]
