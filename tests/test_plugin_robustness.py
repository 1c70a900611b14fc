"""A misbehaving third-party plugin never breaks a command: hooks that raise, verifiers that
answer junk or exit, two plugins claiming one verifier name; and report formats of plugins."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph_main
from conftest import FIXTURES, git
from plugin_helpers import PLAN, latest, make_project, section

from pytest_plangraph.cli import build_parser
from pytest_plangraph.hooks import manager as plugins
from pytest_plangraph.hooks.specs import hookimpl
from pytest_plangraph.plan.model import Node
from pytest_plangraph.vcs.workspace import Workspace
from pytest_plangraph.verifiers import Registry, VerifierResult, settings_of

BASE_PLAN = """
plangraph: 1
plan: robust
nodes:
  - id: step-b
    outputs: [out/b.txt, out/c.txt]
    acceptance:
      - {id: ac-b, verifier: {type: artifact, path: out/b.txt}}
      - {id: ac-c, verifier: {type: artifact, path: out/c.txt}}
"""
IGNORED = "; ignored (the command's result stands; fix or uninstall the plugin)"


@pytest.fixture
def manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The real shared plugin manager (no entry points); what a test registers goes away."""
    monkeypatch.setenv(plugins.AUTOLOAD_OFF, "1")
    plugins.clear_cache()
    pm = plugins.get_plugin_manager()
    yield pm
    for name, _ in list(pm.list_name_plugin()):
        if name != plugins.BUILTIN_PLUGIN:
            pm.unregister(name=name)
    plugins.clear_cache()


def make_repo(tmp_path: Path, extra_nodes: str = "") -> Path:
    """A git repository with the base plan (plus *extra_nodes*) and its two artifacts."""
    root = tmp_path / "repo"
    (root / "out").mkdir(parents=True)
    (root / "plangraph.yaml").write_text(textwrap.dedent(BASE_PLAN).lstrip() + extra_nodes)
    (root / "out" / "b.txt").write_text("b\n")
    (root / "out" / "c.txt").write_text("c\n")
    (root / ".gitignore").write_text(".plangraph/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def node(name: str, *verifiers: str) -> str:
    """A plan node (YAML text) with one criterion per verifier mapping."""
    criteria = "".join(f"      - {{id: ac-{i}, verifier: {v}}}\n" for i, v in enumerate(verifiers))
    return f"  - id: {name}\n    acceptance:\n{criteria}"


def one_criterion(verifier: dict[str, Any]) -> Node:
    return Node.model_validate({"id": "n", "acceptance": [{"id": "ac", "verifier": verifier}]})


class Noisy:
    """Notification hooks that fail the way third-party code does."""

    @hookimpl
    def plangraph_evidence_recorded(self, evidence: Any, store_path: str) -> None:
        raise SystemExit(3)

    @hookimpl
    def plangraph_gate_decision(self, decision: Any) -> None:
        raise RuntimeError("webhook down")


class Recorder:
    """Well-behaved listeners: they must still hear everything."""

    def __init__(self) -> None:
        self.evidence: list[str] = []
        self.decisions: list[tuple[str, str]] = []

    @hookimpl
    def plangraph_evidence_recorded(self, evidence: Any, store_path: str) -> None:
        self.evidence.append(evidence.ref)

    @hookimpl
    def plangraph_gate_decision(self, decision: Any) -> None:
        self.decisions.append((decision.node, decision.verdict))


class Probe:
    """A plug-in verifier type that misbehaves as its ``mode`` setting says."""

    runs_in_pytest = True

    def __init__(self, name: str = "probe") -> None:
        self.name = name

    def subjects(self, settings: Any) -> Any:
        if settings.get("mode") == "subjects-raise":
            raise ZeroDivisionError("no subjects today")
        declared = {"subjects-int": 42, "declare-dir": ["out"], "declare-outside": ["../s.txt"]}
        return declared.get(settings.get("mode"), ["out/b.txt"])

    def config_problems(self, settings: Any, workspace: Any) -> Any:
        if settings.get("mode") == "problems-exit":
            sys.exit("bye")
        return settings.get("answer", [])

    def run(self, node: Any, criterion: Any, workspace: Any) -> VerifierResult:
        mode = settings_of(criterion.verifier).get("mode")
        if mode == "exit":
            raise SystemExit(3)
        if mode == "interrupt":
            raise KeyboardInterrupt
        if mode == "generator-exit":
            raise GeneratorExit
        return JUNK.get(mode, VerifierResult("passed", subjects=("out/b.txt",)))


JUNK: dict[str, Any] = {  # results that look right but could not be stored as evidence
    "reason-int": VerifierResult("failed", reason=404),  # type: ignore[arg-type]
    "int-keys": VerifierResult("passed", details={1: "a"}),
    "message-object": VerifierResult("passed", message=object()),  # type: ignore[arg-type]
    "subjects-text": VerifierResult("passed", subjects="out/b.txt"),  # type: ignore[arg-type]
    "subject-outside": VerifierResult("passed", subjects=("../secret.txt",)),
    "subject-dir": VerifierResult("passed", subjects=("out",)),
    "no-subjects": VerifierResult("passed"),
    "declare-dir": VerifierResult("passed"),
    "declare-outside": VerifierResult("passed"),
}


class Provides:
    """A plugin that registers the given verifier types."""

    def __init__(self, *types: Any) -> None:
        self.types = list(types)

    @hookimpl
    def plangraph_verifier_types(self) -> list[Any]:
        return self.types


def warnings_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("plangraph: warning:")]


# --- notification hooks ---------------------------------------------------------------------


def test_raising_notification_hooks_change_no_result_of_verify_and_claim(
    tmp_path: Path, manager: Any
) -> None:
    recorder = Recorder()
    manager.register(recorder, name="recorder")
    manager.register(Noisy(), name="noisy")  # registered last: pluggy calls it first
    root = make_repo(tmp_path)

    verified = plangraph_main(root, "verify")
    assert verified.code == 0, verified.err
    assert "Traceback" not in verified.err
    assert warnings_of(verified.err) == [
        "plangraph: warning: the plugin 'noisy' failed in plangraph_evidence_recorded"
        f" (2 of 2 calls): SystemExit: 3{IGNORED}"
    ]
    assert sorted(recorder.evidence) == ["step-b/ac-b", "step-b/ac-c"]
    assert {ref: e.outcome for ref, e in latest(root).items()} == {
        "step-b/ac-b": "passed",
        "step-b/ac-c": "passed",
    }

    claimed = plangraph_main(root, "claim", "step-b", "--by", "agent", "--format", "json")
    assert claimed.code == 0, claimed.err
    assert claimed.json()["verdict"] == "PASSED"
    assert warnings_of(claimed.err) == [
        "plangraph: warning: the plugin 'noisy' failed in plangraph_gate_decision:"
        f" RuntimeError: webhook down{IGNORED}"
    ]
    assert recorder.decisions == [("step-b", "PASSED")]


def test_raising_notification_hooks_under_pytest_keep_the_summary_and_exit_code(
    pytester: pytest.Pytester, manager: Any
) -> None:
    root = make_project(pytester)
    manager.register(Noisy(), name="noisy")
    result = pytester.runpytest("--plangraph", "--plangraph-gate", "--plangraph-require=step-b")
    assert result.ret == 0
    result.assert_outcomes(passed=4)
    assert "plangraph gate: every claimed or required node is completed" in section(
        result.stdout.str()
    )
    assert [w.split(":")[2] for w in warnings_of(result.stderr.str())] == [
        " the plugin 'noisy' failed in plangraph_evidence_recorded (3 of 3 calls)",
        " the plugin 'noisy' failed in plangraph_gate_decision",
    ]
    assert latest(root)["step-b/ac-exists"].outcome == "passed"

    plain = pytester.runpytest("--plangraph")
    assert plain.ret == 0
    assert section(plain.stdout.str())[0].startswith("plan demo v1:")


def test_a_hook_wrapper_is_run_on_its_own(manager: Any) -> None:
    seen: list[str] = []

    class Wrapping:
        @hookimpl(wrapper=True)
        def plangraph_gate_decision(self, decision: Any) -> Any:
            seen.append(f"before {decision}")
            answer = yield
            seen.append(f"after {answer}")
            return answer

    manager.register(Wrapping(), name="wrapping")
    plugins.notify("plangraph_gate_decision", [{"decision": "d"}], warn=seen.append)
    assert seen == ["before d", "after []"]


# --- verifiers that misbehave ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "problems"),
    [
        ("threshold: missing", ["threshold: missing"]),
        (["a", "b"], ["a", "b"]),
        (None, []),
        (
            42,
            [
                "verifier 'probe' returned int from config_problems, not a list of messages"
                " (a bug in its plugin)"
            ],
        ),
    ],
)
def test_config_problems_answers_are_never_split_into_characters(
    tmp_path: Path, answer: Any, problems: list[str]
) -> None:
    registry = Registry([("probe-plugin", [Probe()])])
    one = one_criterion({"type": "probe", "answer": answer})
    assert registry.config_problems(one.acceptance[0], Workspace.at(tmp_path)) == problems


def test_lint_shows_a_string_answer_as_one_finding(tmp_path: Path, manager: Any) -> None:
    manager.register(Provides(Probe()), name="probe-plugin")
    root = make_repo(
        tmp_path,
        node(
            "step-p",
            '{type: probe, answer: "threshold: missing"}',
            "{type: probe, mode: problems-exit}",
        ),
    )
    result = plangraph_main(root, "lint")
    assert result.code == 1
    found = [
        line.split("]: ", 1)[1] for line in result.out.splitlines() if "VERIFIER_CONFIG" in line
    ]
    assert found == [
        "step-p/ac-0: threshold: missing",
        "step-p/ac-1: verifier 'probe' crashed checking its settings: SystemExit: bye",
    ]


def test_verify_records_a_broken_verifier_as_crashed(tmp_path: Path, manager: Any) -> None:
    manager.register(Provides(Probe()), name="probe-plugin")
    modes = ("subjects-raise", "subjects-int", "exit", "fine")
    root = make_repo(tmp_path, node("step-p", *(f"{{type: probe, mode: {m}}}" for m in modes)))
    result = plangraph_main(root, "verify")
    assert result.code == 1, result.err
    assert "Traceback" not in result.err
    records = latest(root)
    crashed = {f"step-p/ac-{i}": records[f"step-p/ac-{i}"] for i in range(3)}
    assert {(e.outcome, e.reason) for e in crashed.values()} == {("error", "VERIFIER_CRASHED")}
    assert [e.details["message"] for e in crashed.values()] == [
        "verifier 'probe' crashed declaring its subjects: ZeroDivisionError: no subjects today",
        "verifier 'probe' returned int from subjects(), not a list of paths (a bug in its plugin)",
        "verifier 'probe' crashed: SystemExit: 3",
    ]
    assert records["step-p/ac-3"].outcome == "passed"
    assert records["step-b/ac-b"].outcome == "passed"


JUNK_MESSAGES = {
    "reason-int": "returned a reason of type int, not text or None",
    "int-keys": "returned details with a mapping key that is not text",
    "message-object": "returned a message of type object, not text",
    "subjects-text": "returned subjects of type str, not a tuple of paths",
    "subject-outside": "names the subject '../secret.txt', which is outside the repository",
    "subject-dir": "names the subject 'out', which is a directory",
    "declare-outside": "names the subject '../s.txt', which is outside the repository",
    "declare-dir": "names the subject 'out', which is a directory",
    "generator-exit": "crashed: GeneratorExit",
}


def test_a_junk_result_is_its_criterion_error_and_the_others_are_recorded(
    tmp_path: Path, manager: Any
) -> None:
    manager.register(Provides(Probe()), name="probe-plugin")
    modes = [*JUNK_MESSAGES, "fine"]
    root = make_repo(tmp_path, node("step-p", *(f"{{type: probe, mode: {m}}}" for m in modes)))
    result = plangraph_main(root, "verify")
    assert result.code == 1, result.err
    assert "Traceback" not in result.err
    records = latest(root)
    for index, (mode, message) in enumerate(JUNK_MESSAGES.items()):
        record = records[f"step-p/ac-{index}"]
        assert (record.outcome, record.reason) == ("error", "VERIFIER_CRASHED"), mode
        assert message in record.details["message"], mode
    assert records[f"step-p/ac-{len(JUNK_MESSAGES)}"].outcome == "passed"
    assert records["step-b/ac-b"].outcome == "passed"


def test_the_subjects_a_verifier_declares_are_bound_into_its_evidence(
    tmp_path: Path, manager: Any
) -> None:
    manager.register(Provides(Probe()), name="probe-plugin")
    root = make_repo(tmp_path, node("step-p", "{type: probe, mode: no-subjects}"))
    assert plangraph_main(root, "verify").code == 0
    record = latest(root)["step-p/ac-0"]
    assert list(record.subjects) == ["out/b.txt"]  # declared by subjects(), not returned
    (root / "out" / "b.txt").write_text("changed\n")
    status = json.loads(plangraph_main(root, "status", "--format", "json").out)
    states = {n["id"]: n["status"] for n in status["nodes"]}
    assert states["step-p"] == "stale"


class Unsure(Probe):
    @property  # type: ignore[override]
    def runs_in_pytest(self) -> bool:
        raise RuntimeError("cannot tell")


def test_a_verifier_type_whose_attribute_raises_is_a_load_error(
    tmp_path: Path, manager: Any
) -> None:
    manager.register(Provides(Unsure("unsure")), name="unsure-plugin")
    result = plangraph_main(make_repo(tmp_path), "status")
    assert result.code == 2
    assert result.err.strip() == (
        "plangraph: error: plugin 'unsure-plugin' returned a verifier type (Unsure) that failed "
        "when its attributes were read: RuntimeError: cannot tell"
    )


def test_a_keyboard_interrupt_in_a_verifier_is_not_swallowed(tmp_path: Path) -> None:
    registry = Registry([("probe-plugin", [Probe()])])
    one = one_criterion({"type": "probe", "mode": "interrupt"})
    with pytest.raises(KeyboardInterrupt):
        registry.run_safely(one, one.acceptance[0], Workspace.at(tmp_path))


def test_under_pytest_a_failing_subjects_is_verifier_crashed(
    pytester: pytest.Pytester, manager: Any
) -> None:
    manager.register(Provides(Probe()), name="probe-plugin")
    plan = PLAN.replace(
        "{type: artifact, path: out/b.txt}",
        "{type: probe, mode: subjects-raise}\n      - id: ac-junk\n"
        "        verifier: {type: probe, mode: subjects-int}",
    )
    root = make_project(pytester, plan=plan)
    result = pytester.runpytest("--plangraph")
    result.assert_outcomes(passed=3, failed=2)
    records = latest(root)
    for ref in ("step-b/ac-exists", "step-b/ac-junk"):
        assert (records[ref].outcome, records[ref].reason) == ("error", "VERIFIER_CRASHED")
    assert "crashed declaring its subjects" in records["step-b/ac-exists"].details["message"]


# --- one verifier name, two plugins ---------------------------------------------------------


def test_a_name_clash_refuses_only_the_criteria_that_use_it(tmp_path: Path, manager: Any) -> None:
    manager.register(Provides(Probe("twin")), name="twin-one")
    manager.register(Provides(Probe("twin")), name="twin-two")
    clean = make_repo(tmp_path / "clean")
    for command in ("lint", "status", "audit"):
        assert plangraph_main(clean, command).code == 0, command

    root = make_repo(tmp_path / "uses", node("step-t", "{type: twin}"))
    clash = "verifier type 'twin' is registered by several plugins (twin-one, twin-two)"
    linted = plangraph_main(root, "lint")
    assert linted.code == 1
    assert [line for line in linted.out.splitlines() if "VERIFIER_CONFIG" in line] == [
        f"plangraph.yaml:11:20: error VERIFIER_CONFIG [step-t]: step-t/ac-0: {clash};"
        " uninstall or block all but one"
    ]
    status = plangraph_main(root, "status")
    assert status.code == 0
    assert clash in status.err
    assert plangraph_main(root, "verify", "step-b").code == 0
    assert latest(root)["step-b/ac-b"].outcome == "passed"
    whole = plangraph_main(root, "verify")  # the clashing criterion is an error, not a stop
    assert whole.code == 1, whole.err
    refused = latest(root)["step-t/ac-0"]
    assert (refused.outcome, refused.reason) == ("error", "UNKNOWN_VERIFIER")
    assert clash in refused.details["message"]


def test_a_plugin_settings_problem_stops_commands_as_any_plan_error(
    tmp_path: Path, manager: Any
) -> None:
    # a misspelt setting is the plan's mistake: judging past it would pass a check of nothing
    manager.register(Provides(Probe()), name="probe-plugin")
    root = make_repo(tmp_path, node("step-p", '{type: probe, answer: ["max_line: unknown"]}'))
    for command in ("status", "verify", "audit"):
        refused = plangraph_main(root, command)
        assert refused.code == 2, command
        assert "VERIFIER_CONFIG: step-p/ac-0: max_line: unknown" in refused.err
    assert plangraph_main(root, "lint").code == 1


def test_under_pytest_a_name_clash_is_an_error_of_its_criterion_only(
    pytester: pytest.Pytester, manager: Any
) -> None:
    manager.register(Provides(Probe("twin")), name="twin-one")
    manager.register(Provides(Probe("twin")), name="twin-two")
    plan = PLAN.replace("{type: artifact, path: out/b.txt}", "{type: twin}")
    root = make_project(pytester, plan=plan)
    result = pytester.runpytest("--plangraph")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the clashing item fails, no stop
    result.assert_outcomes(passed=3, failed=1)
    records = latest(root)
    assert (records["step-b/ac-exists"].outcome, records["step-b/ac-exists"].reason) == (
        "error",
        "UNKNOWN_VERIFIER",
    )
    assert records["step-a/ac-pattern"].outcome == "passed"


def test_one_module_named_by_two_entry_points_is_registered_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for dist, entry in (("plangraph-linecount", "linecount"), ("linecount-again", "again")):
        info = tmp_path / f"{dist.replace('-', '_')}-0.1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n")
        (info / "entry_points.txt").write_text(f"[plangraph]\n{entry} = plangraph_linecount\n")
    shutil.copy(FIXTURES / "plangraph-linecount" / "plangraph_linecount.py", tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(plugins.AUTOLOAD_OFF, raising=False)
    plugins.clear_cache()
    try:
        assert plugins.get_registry().get("linecount").name == "linecount"
    finally:
        plugins.clear_cache()
        sys.modules.pop("plangraph_linecount", None)


# --- report formats -------------------------------------------------------------------------


class Formats:
    @hookimpl
    def plangraph_report_formats(self) -> dict[str, Any]:
        return {
            "yaml": lambda r: (
                f"format {r['format']}: "
                + ", ".join(f"{n['id']}={n['status']}" for n in r["nodes"])
            ),
            "json": lambda r: "hijacked",
            "boom": lambda r: 1 / 0,
        }


class BrokenFormats:
    @hookimpl
    def plangraph_report_formats(self) -> dict[str, Any]:
        raise LookupError("no formats")


def test_status_renders_plugin_report_formats(tmp_path: Path, manager: Any) -> None:
    manager.register(Formats(), name="formats")
    manager.register(BrokenFormats(), name="broken-formats")
    root = make_repo(tmp_path)

    result = plangraph_main(root, "status", "--format", "yaml")
    assert (result.code, result.out) == (0, "format 1: step-b=ready\n")
    assert warnings_of(result.err) == [
        "plangraph: warning: the plugin 'broken-formats' failed in plangraph_report_formats:"
        f" LookupError: no formats{IGNORED}"
    ]
    assert json.loads(plangraph_main(root, "status", "--format", "json").out)["format"] == 1

    unknown = plangraph_main(root, "status", "--format", "toml")
    assert unknown.code == 2
    assert (
        "invalid choice: 'toml' (choose from 'text', 'json', 'markdown', 'boom', 'yaml')"
        in unknown.err
    )
    # the broken plugin may be the one meant to offer it: the refusal says it failed
    assert "'broken-formats' failed in plangraph_report_formats" in unknown.err
    boom = plangraph_main(root, "status", "--format", "boom")
    assert boom.code == 2
    assert "plangraph: error: the report format 'boom' of the plugin 'formats' failed:" in boom.err
    assert "ZeroDivisionError" in boom.err
    assert plangraph_main(root, "verify", "--format", "yaml").code == 2  # status only


def test_building_the_parser_loads_no_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    info = tmp_path / "plangraph_lazy-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plangraph-lazy\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[plangraph]\nlazy = plangraph_lazy_formats\n")
    (tmp_path / "plangraph_lazy_formats.py").write_text(
        "import pluggy\n"
        "@pluggy.HookimplMarker('plangraph')\n"
        "def plangraph_report_formats():\n"
        "    return {'csv': lambda report: 'id,status'}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(plugins.AUTOLOAD_OFF, raising=False)
    plugins.clear_cache()
    try:
        parser = build_parser()
        with pytest.raises(SystemExit):
            parser.parse_args(["--help"])
        parser.parse_args(["status", "--format", "json"])
        assert "plangraph_lazy_formats" not in sys.modules
        assert parser.parse_args(["status", "--format", "csv"]).format == "csv"
        assert "plangraph_lazy_formats" in sys.modules
        assert plugins.get_plugin_manager().has_plugin("lazy")
    finally:
        capsys.readouterr()
        plugins.clear_cache()
        sys.modules.pop("plangraph_lazy_formats", None)
