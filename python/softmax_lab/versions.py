"""The versions of Python and of the frameworks a Python backend runs on, for `list` and the
ledger: a figure is only comparable with one taken on the same versions."""
import platform


def framework_versions(mods=("numpy", "torch", "triton", "liger_kernel")):
    out = {"python": platform.python_version()}
    for mod in mods:
        try:
            m = __import__(mod)
        except Exception:
            continue
        v = getattr(m, "__version__", None)
        if v is None and mod == "liger_kernel":
            try:
                from importlib.metadata import version
                v = version("liger-kernel")
            except Exception:
                v = "?"
        out[mod] = str(v)
    return out


def describe(mods=()):
    """"python 3.12.3, torch 2.11.0, ..." for the modules named (those importable)."""
    return ", ".join("%s %s" % kv for kv in framework_versions(mods).items())
