"""The pytest plugin of softmax_lab (entry point pytest11 `softmax_lab`; `-p no:softmax_lab`
turns it off).

  * the `softmax_lab` fixture: the package, with assert_kernel saving its reproducers in the
    test's own folder, and every kernel the test registered through it unregistered after it;
  * reproducers of softmax_lab.testing.assert_kernel go under pytest's temporary directory
    (tmp_path_factory: pytest-of-USER/pytest-N/softmax_lab/KERNEL), unless
    `--softmax-lab-reproducers DIR` or the ini option `softmax_lab_reproducers` names a folder.

Nothing is loaded until a test uses it: the plugin costs an unrelated test run nothing.
"""
import os

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("softmax_lab")
    group.addoption("--softmax-lab-reproducers", dest="softmax_lab_reproducers", default=None, metavar="DIR",
                    help="where softmax_lab.testing.assert_kernel saves reproducers (default: under "
                         "pytest's temporary directory)")
    parser.addini("softmax_lab_reproducers", "where softmax_lab.testing.assert_kernel saves reproducers",
                  default="")


def _configured_dir(config):
    d = config.getoption("softmax_lab_reproducers") or config.getini("softmax_lab_reproducers")
    if not d:
        return None
    return d if os.path.isabs(d) else os.path.join(str(config.rootpath), d)


@pytest.fixture(scope="session", autouse=True)
def _softmax_lab_reproducer_dir(request, tmp_path_factory):
    """Points assert_kernel at pytest's temporary directory (or the configured folder)."""
    from . import testing
    d = _configured_dir(request.config) or str(tmp_path_factory.mktemp("softmax_lab", numbered=False))
    before = testing._default_save_dir
    testing.set_reproducer_dir(d)
    yield d
    testing.set_reproducer_dir(before)


class _Fixture:
    """softmax_lab, with register() remembered for teardown and assert_kernel saving into
    the test's folder."""

    def __init__(self, save_dir):
        import softmax_lab
        self._sl = softmax_lab
        self._mine = []
        self.reproducer_dir = save_dir

    def __getattr__(self, attr):
        return getattr(self._sl, attr)

    def register(self, name, fn, *args, **kwargs):
        out = self._sl.register(name, fn, *args, **kwargs)
        self._mine.append(name)
        return out

    def assert_kernel(self, fn, *args, **kwargs):
        from . import testing
        kwargs.setdefault("save", os.path.join(self.reproducer_dir, testing._kernel_name(fn, kwargs.get("name"))))
        return testing.assert_kernel(fn, *args, **kwargs)

    def _teardown(self):
        for name in self._mine:
            if name in self._sl.registered():
                self._sl.unregister(name)


@pytest.fixture
def softmax_lab(request, tmp_path):
    """The softmax_lab package for one test: .assert_kernel, .check, .judge, .bench,
    .register (unregistered after the test); .reproducer_dir is this test's folder."""
    cfg = _configured_dir(request.config)
    d = os.path.join(cfg, request.node.name) if cfg else str(tmp_path / "softmax_lab")
    f = _Fixture(d)
    yield f
    f._teardown()
