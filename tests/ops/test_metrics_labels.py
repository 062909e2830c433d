"""Every label value on `/metrics` comes from a fixed set, and `ops/metrics.py` owns every set (issue 35,
defect 6): a client answering the bridge's approval question with an error of its own code made that code a
`code` label value, minting series on an open endpoint at the client's will."""

from __future__ import annotations

import ast

from prometheus_client.parser import text_string_to_metric_families

from skillwire.host.tool_schemas import TOOL_NAMES
from skillwire.ops.metrics import (
    BRIDGE_TOOLS,
    LABEL_VALUES,
    OTHER,
    bounded,
    code_label,
    exposition,
    method_label,
    metrics,
    record_approval,
    record_reload,
    record_tool_call,
    record_watch_events,
)
from support.imports import MODULES


def test_a_client_chosen_error_code_is_other() -> None:
    assert code_label(424242) == OTHER
    assert code_label(-31999) == OTHER
    assert code_label(-32602) == "-32602"
    assert code_label(-32042) == "-32042"


def test_bounded_keeps_a_member_and_turns_anything_else_into_other() -> None:
    assert bounded("read", frozenset({"read"})) == "read"
    assert bounded("read\\n", frozenset({"read"})) == OTHER
    assert method_label("skills/list") == "skills/list"
    assert method_label("x" * 10_000) == OTHER


def test_the_bridge_tool_set_is_the_hosts_tool_names() -> None:
    assert frozenset(TOOL_NAMES) == BRIDGE_TOOLS


def test_recorded_values_outside_their_sets_are_scraped_as_other() -> None:
    record_tool_call("made-up-tool", "made-up-outcome")
    record_approval("made-up-kind", "made-up-outcome")
    record_reload("made-up", 0.1)
    record_watch_events("made-up", 1)
    series_of = metrics().requests.series_of
    series_of(method_label("made/up"), code_label(424242))[0] += 1
    text, _ = exposition(None)
    found: dict[str, dict[str, set[str]]] = {}
    for family in text_string_to_metric_families(text.decode()):
        if family.name not in LABEL_VALUES:
            continue
        for sample in family.samples:
            for label, value in sample.labels.items():
                if label != "le":
                    found.setdefault(family.name, {}).setdefault(label, set()).add(value)
    assert "made-up" not in text.decode()
    assert "424242" not in text.decode()
    for name, labels in found.items():
        assert set(labels) == set(LABEL_VALUES[name]), name  # the table names every label of the family
        for label, values in labels.items():
            allowed = LABEL_VALUES[name][label]
            if allowed is not None:
                assert values <= allowed, (name, label, values - allowed)
    assert OTHER in found["skillwire_bridge_tool_calls"]["tool"]
    assert OTHER in found["skillwire_requests"]["code"]


def test_every_literal_label_value_in_the_package_is_in_a_set() -> None:
    # `.labels("hit")` in catalog/store.py, `.labels("signed")` in cli/serve.py: a literal outside every set
    # would be a value the table does not know.
    known = set().union(*(values for labels in LABEL_VALUES.values() for values in labels.values() if values))
    literals = {
        (module, arg.value)
        for module, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "labels"
        for arg in node.args
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    }
    assert literals, "the scan found no label literal at all"
    assert {(module, value) for module, value in literals if value not in known} == set()
