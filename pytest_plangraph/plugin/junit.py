"""Evidence ids as ``plangraph_evidence`` properties of the tests in pytest's JUnit XML.

Evidence exists only once the session ends, after pytest's JUnit writer has frozen each test
case's XML element, and before it writes the file. This module adds a property to those
elements; it reaches into ``_pytest.junitxml`` (``xml_key``, ``node_reporters``), so it checks
every step and quietly does nothing when a pytest version lays them out differently: the
``plangraph_criterion`` and ``plangraph_run`` properties, added while the tests run, identify
the evidence on their own.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

EVIDENCE_PROPERTY = "plangraph_evidence"


def attach_evidence(config: pytest.Config, evidence: Mapping[str, Sequence[str]]) -> int:
    """Add each test's evidence ids (*evidence*: node id → ids) to the JUnit XML report;
    returns how many test cases were given properties."""
    cases = _test_cases(config)
    if not cases:
        return 0
    attached = 0
    for nodeid, ids in evidence.items():
        for element in cases.get(_case_key(config, nodeid), ()):
            properties = element.find("properties")
            if properties is None:
                properties = ET.Element("properties")
                element.insert(0, properties)
            for evidence_id in ids:
                properties.append(ET.Element("property", name=EVIDENCE_PROPERTY, value=evidence_id))
            attached += 1
    return attached


def _test_cases(config: pytest.Config) -> dict[tuple[str, str], list[ET.Element]]:
    """Finished test case elements by (classname, name)."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:
        return {}
    reporters = getattr(config.stash.get(xml_key, None), "node_reporters_ordered", None)
    cases: dict[tuple[str, str], list[ET.Element]] = {}
    for reporter in reporters if isinstance(reporters, list) else ():
        element = _frozen_element(reporter)
        if element is not None:
            key = (element.get("classname", ""), element.get("name", ""))
            cases.setdefault(key, []).append(element)
    return cases


def _case_key(config: pytest.Config, nodeid: str) -> tuple[str, str]:
    """(classname, name) that pytest's JUnit writer gives the test *nodeid*."""
    from _pytest.junitxml import mangle_test_address, xml_key

    names = mangle_test_address(nodeid)
    prefix = getattr(config.stash.get(xml_key, None), "prefix", None)
    if prefix:
        names.insert(0, prefix)
    return ".".join(names[:-1]), names[-1]


def _frozen_element(reporter: Any) -> ET.Element | None:
    """The test case element, when the reporter has finalized it (the same object every call)."""
    to_xml = getattr(reporter, "to_xml", None)
    if to_xml is None or getattr(reporter, "attrs", None) is not None:
        return None  # not finalized: to_xml() would build a new element each time
    element = to_xml()
    return element if isinstance(element, ET.Element) else None
