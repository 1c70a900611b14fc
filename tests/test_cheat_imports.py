"""A failing test marked through an imported name, in forms the import reader once missed.

Each case records the demo project complete, then adds to :data:`OTHER` (a collected test file
none of whose tests verified ``ac-pattern``) a failing test marked for ``ac-pattern`` with a
reference taken from a module that was there already: the gate must say the criterion is stale.
Real pytest sessions (``pytester``) in a real git repository, and the real ``plangraph``
command.
"""

from __future__ import annotations

import pytest
from cache_helpers import as_tester
from glob_helpers import pattern_stale, write
from test_plugin_imported_refs import CONSTANT, marked_and_broken, recorded
from test_plugin_quoted_refs import OTHER, OTHER_TEXT

from pytest_plangraph.vcs.imports import imports_of

MARKS = {"tests/marks.py": CONSTANT}
PACKAGE = {"tests/helpers/__init__.py": "", "tests/helpers/marks.py": CONSTANT}
CALLED = "import importlib\n\n@pytest.mark.criterion(importlib.import_module({}).PATTERN)"

ATTACKS: dict[str, tuple[dict[str, str], str]] = {
    "a fullwidth name from a package": (
        PACKAGE,
        "from helpers import \uff4darks\n\n@pytest.mark.criterion(marks.PATTERN)",
    ),
    "a fullwidth name from the file's package": (
        {"tests/__init__.py": "", **MARKS},
        "from . import \uff4darks\n\n@pytest.mark.criterion(marks.PATTERN)",
    ),
    "import_module(name=...)": (MARKS, CALLED.format("name='marks'")),
    "import_module(f'...')": (MARKS, CALLED.format("f'marks'")),
    "import_module('''...''')": (MARKS, CALLED.format("'''marks'''")),
    "import_module(('...'))": (MARKS, CALLED.format("('marks')")),
    "import_module('..' '..')": (MARKS, CALLED.format("'mar' 'ks'")),
    "an import in a string exec runs": (
        MARKS,
        "exec('from marks import PATTERN')\n\n@pytest.mark.criterion(PATTERN)  # noqa: F821",
    ),
    "a module run by its path": (
        MARKS,
        "import os, runpy\n\nHERE = os.path.dirname(__file__)\n"
        "@pytest.mark.criterion(runpy.run_path(os.path.join(HERE, 'marks.py'))['PATTERN'])",
    ),
    "a module loaded from its file location": (
        {"lib/marks.py": CONSTANT},
        "import importlib.util, os\n\n"
        "SPEC = importlib.util.spec_from_file_location(\n"
        "    'm', os.path.join(os.path.dirname(__file__), '..', 'lib/marks.py'))\n"
        "MOD = importlib.util.module_from_spec(SPEC)\nSPEC.loader.exec_module(MOD)\n\n"
        "@pytest.mark.criterion(MOD.PATTERN)",
    ),
    "a folder a conftest puts on sys.path": (
        {
            "tests/conftest.py": "import os, sys\n\nsys.path.insert(0, os.path.join("
            "os.path.dirname(__file__), '..', 'vendor', 'shared'))\n",
            "vendor/shared/marks.py": CONSTANT,
        },
        "from marks import PATTERN\n\n@pytest.mark.criterion(PATTERN)",
    ),
    "a folder the test file puts on sys.path": (
        {"vendor/shared/marks.py": CONSTANT},
        "import os, sys\n\nsys.path.append(os.path.join(os.path.dirname(__file__), '..', "
        "'vendor', 'shared'))\nfrom marks import PATTERN  # noqa: E402\n\n"
        "@pytest.mark.criterion(PATTERN)",
    ),
    "the pytest namespace a conftest sets": (
        {"tests/conftest.py": 'import pytest\n\npytest.PATTERN = "step-a/ac-pattern"\n'},
        "@pytest.mark.criterion(pytest.PATTERN)",
    ),
    "a builtin a conftest above the tests sets": (
        {"conftest.py": 'import builtins\n\nbuiltins.PATTERN = "step-a/ac-pattern"\n'},
        "@pytest.mark.criterion(PATTERN)  # noqa: F821",
    ),
}
"""Each form: the modules there when the run was recorded, and the lines that mark the failing
test added to :data:`OTHER`."""


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_failing_test_marked_through_a_name_from_elsewhere_stales_its_criterion(
    pytester: pytest.Pytester, attack: str
) -> None:
    files, marking = ATTACKS[attack]
    marked_and_broken(pytester, files, marking)


@pytest.mark.parametrize(
    ("text", "module"),
    [
        ("from . import \uff4darks", (1, "", ("marks",))),
        ("from pkg import \uff4darks as m", (0, "pkg", ("marks",))),
        ("importlib.import_module(name='marks')", (0, "marks", ())),
        ("import_module(f'marks')", (0, "marks", ())),
        ("import_module('''marks''')", (0, "marks", ())),
        ("import_module(('marks'))", (0, "marks", ())),
        ("__import__('ma' 'rks')", (0, "marks", ())),
        ("pytest.importorskip(modname='..marks')", (2, "marks", ())),
        ("exec('from marks import PATTERN')", (0, "marks", ("PATTERN",))),
        ('exec("import os, marks as m")', (0, "marks", ())),
        ("runpy.run_path('lib/marks.py')", (-1, "lib/marks.py", ())),
    ],
)
def test_the_import_reader_finds_the_module_as_python_names_it(
    text: str, module: tuple[int, str, tuple[str, ...]]
) -> None:
    found = imports_of(text)
    assert found is not None and module in found


def test_a_conftest_that_quotes_a_reference_binds_each_test_file_by_its_bytes(
    pytester: pytest.Pytester,
) -> None:
    """A test file may read what a conftest put anywhere (``pytest.PATTERN``): with one that
    quotes ``ac-pattern``, any edit of a collected test file stales it, not ``ac-marked``."""
    conftest = {"tests/conftest.py": 'import pytest\n\npytest.PATTERN = "step-a/ac-pattern"\n'}
    root = recorded(pytester, conftest)
    write(root, OTHER, f"import pytest\n\n{OTHER_TEXT}\n\nVALUE = 1\n")
    pattern_stale(root)
