"""The HyperNode graph's structural checks, one test (or more) per check, and the two adapters:
render/validate (stack errors) and check (findings, notes) agree on the same stack."""
from __future__ import annotations

import pytest

from modules.semantics import hypernodes as hn
from tests.modules.fabric.helpers import project
from tests.support.cli import run


def graph(*vertices: tuple, inventory=None) -> hn.Graph:
    """``(name, tier, [children], [nodes])`` per vertex; nodes become one Node member."""
    g = hn.Graph(inventory=inventory)
    for name, tier, children, nodes, *tier_name in vertices:
        members = [hn.Member("HyperNode", child=c) for c in children]
        members += [hn.Member("Node", nodes=nodes)] if nodes else []
        g.add(hn.Vertex(name, tier, members, tier_name[0] if tier_name else None))
    return g


def found(check, g: hn.Graph) -> list[tuple[str, str | None, str]]:
    return [(p.vertex, p.member, p.message) for p in check(g)]


GOOD = graph(("spine", 2, ["l1", "l2"], []), ("l1", 1, [], ["a", "b"]), ("l2", 1, [], ["c"]), inventory=["a", "b", "c"])


@pytest.mark.parametrize("check", hn.CHECKS, ids=lambda c: c.__name__)
def test_a_sound_tree_has_no_problem(check):
    assert found(check, GOOD) == []


def test_duplicates():
    g = graph(("l1", 1, [], ["a"]), ("l1", 1, [], ["b"]))
    assert found(hn.duplicates, g) == [("l1", None, "HyperNode 'l1' is declared twice; whichever is applied last "
                                        "replaces the others' members")]


def test_unknown_child_is_pinned_on_its_member():
    g = graph(("s", 2, ["l1", "l9"], []), ("l1", 1, [], ["a"]))
    [(vertex, member, message)] = found(hn.unknown_children, g)
    assert (vertex, member) == ("s", 1) and message.startswith("child HyperNode 'l9' is not declared")


def test_two_parents_pins_every_parent_later_ones_first():
    g = graph(("a", 2, ["c"], []), ("b", 2, ["c"], []), ("c", 1, [], ["n"]))
    problems = found(hn.two_parents, g)
    assert [(v, m) for v, m, _ in problems] == [("b", 0), ("a", 0)]
    assert all("'c' has two parents, 'a' and 'b'" in text for _, _, text in problems)


def test_a_child_listed_twice_by_one_parent():
    g = graph(("a", 2, ["c", "c"], []), ("c", 1, [], ["n"]))
    assert found(hn.two_parents, g) == [("a", 1, "HyperNode 'c' is listed twice under 'a'")]


def test_cycle_is_reported_once_on_each_member_with_one_text():
    g = graph(("b", 3, ["c"], []), ("c", 3, ["a"], []), ("a", 3, ["b"], []))
    problems = found(hn.cycles, g)
    assert sorted(v for v, _, _ in problems) == ["a", "b", "c"]
    assert {t for _, _, t in problems} == {next(iter({t for _, _, t in problems}))}
    assert "(parent -> child): a -> b -> c -> a" in problems[0][2] and problems[0][0] == "a"


def test_self_loop():
    g = graph(("a", 1, ["a"], ["n"]))
    assert found(hn.cycles, g) == [("a", 0, "HyperNode 'a' lists itself as a child (a cycle)")]


def test_mixed_members_pins_the_first_node_member():
    g = graph(("s", 2, ["l1"], ["x"]), ("l1", 1, [], ["a"]))
    [(vertex, member, message)] = found(hn.mixed_members, g)
    assert (vertex, member) == ("s", 1) and "has both child HyperNodes and nodes" in message


def test_regex_or_label_only_on_node_members():
    g = hn.Graph()
    g.add(hn.Vertex("s", 2, [hn.Member("HyperNode", "regexMatch"), hn.Member("Node", "regexMatch", nodes=["a"])]))
    [(vertex, member, message)] = found(hn.selectors, g)
    assert (vertex, member) == ("s", 0) and "selected by regexMatch is silently ignored" in message


def test_empty():
    assert [v for v, _, _ in found(hn.empty, graph(("e", 1, [], []), ("l", 1, [], ["a"])))] == ["e"]


def test_tier_order_parent_not_above_child():
    g = graph(("top", 1, ["l"], []), ("l", 2, [], ["a"]))
    [(vertex, _, message)] = found(hn.tier_order, g)
    assert vertex == "top" and "'top' is at tier 1 but its child 'l' is at tier 2" in message


def test_mixed_depth_leaf_above_the_lowest_and_tier_gap():
    g = graph(("core", 3, ["s", "l2"], []), ("s", 2, ["l1"], []), ("l1", 1, [], ["a"]), ("l2", 1, [], ["b"]))
    [(vertex, member, message)] = found(hn.mixed_depth, g)
    assert (vertex, member) == ("core", 1) and "more than one tier above its child 'l2'" in message
    g = graph(("core", 3, ["s", "l2"], []), ("s", 2, ["l1"], []), ("l1", 1, [], ["a"]), ("l2", 2, [], ["b"]))
    [(vertex, _, message)] = found(hn.mixed_depth, g)
    assert vertex == "l2" and "leaf HyperNode 'l2' sits at tier 2, above the lowest leaves (tier 1)" in message


def test_mixed_depth_is_a_warning_where_the_stack_accepts_it():
    g = graph(("core", 3, ["l2"], []), ("l2", 1, [], ["b"]))
    assert [p.level for p in hn.problems(g, (hn.mixed_depth,))] == [hn.ERROR]
    assert [p.level for p in hn.problems(g, (hn.mixed_depth,), accept_mixed_depth=True)] == [hn.WARNING]


def test_tier_names_one_to_one_minority_reported():
    g = graph(("s", 2, ["l1", "l2"], [], "rack"), ("l1", 1, [], ["a"], "rack"), ("l2", 1, [], ["b"], "rack"))
    [(vertex, _, message)] = found(hn.tier_names, g)
    assert vertex == "s" and "tier name 'rack' is used for tiers 1 and 2" in message
    g = graph(("l1", 1, [], ["a"], "leaf"), ("l2", 1, [], ["b"], "leaf"), ("l3", 1, [], ["c"], "rack"))
    [(vertex, _, message)] = found(hn.tier_names, g)
    assert vertex == "l3" and "tier 1 is named both 'leaf' and 'rack'" in message


def test_shared_nodes_later_declaration_first():
    g = graph(("l1", 1, [], ["a", "b"]), ("l2", 1, [], ["b", "c", "a"]))
    problems = found(hn.shared_nodes, g)
    assert [v for v, _, _ in problems] == ["l2", "l1"]
    assert problems[0][2].startswith("node 'a' is under two leaves, 'l1' and 'l2' (and 1 more of its nodes: b)")


def test_uncovered_is_a_warning_and_needs_known_members():
    g = graph(("l1", 1, [], ["a"]), inventory=["a", "b", "c"])
    [problem] = hn.uncovered(g)
    assert problem.level == hn.WARNING and problem.nodes == ("b", "c")
    assert "2 node(s) hang off no leaf HyperNode (b, c)" in problem.message
    g.vertices["l1"].members.append(hn.Member("Node", "labelMatch", nodes=None))
    assert list(hn.uncovered(g)) == [] and not hn.coverage_known(g)


# --- one stack, three commands --------------------------------------------------------------

UNCOVERED = {"source": "inline", "switches": {"spine": {"switches": ["l1"]}, "l1": {"nodes": ["gpu-[01-02]"]}},
             "nodes": ["gpu-[01-03]"]}


@pytest.fixture(scope="module")
def uncovered_stack(tmp_path_factory):
    return project(tmp_path_factory.mktemp("uncovered"), UNCOVERED)


def test_validate_render_check_and_preview_agree_on_an_uncovered_node(uncovered_stack, tmp_path):
    root = str(uncovered_stack)
    validated = run("validate", "test", "--project", root)
    rendered = run("render", "test", "--project", root, "--out", str(tmp_path / "deploy"))
    for result in (validated, rendered):
        assert result.code == 0, result.err
        assert "1 node(s) hang off no leaf switch (gpu-03)" in result.err
    for command in ("check", "preview"):      # in-process rules, and the real pack over gRPC
        checked = run(command, "test", "--project", root)
        assert checked.code == 0, checked.out + checked.err
        note = next(line for line in checked.out.splitlines() if "hang off no leaf HyperNode (gpu-03)" in line)
        assert note.startswith("NOTE") and "hypernode-tree-valid" in note
        assert "add them to a leaf switch of the stack's fabric" in note
        assert "0 mandatory, 0 advisory" in checked.out


def test_full_coverage_makes_it_an_error_everywhere(tmp_path):
    root = str(project(tmp_path, {**UNCOVERED, "fullCoverage": True}))
    for args in (("validate",), ("render", "--out", str(tmp_path / "deploy"))):
        result = run(*args[:1], "test", "--project", root, *args[1:])
        assert result.code == 2 and "fullCoverage is on" in result.err
    checked = run("check", "test", "--project", root)
    assert checked.code == 1 and "hypernode-tree-valid" in checked.out and "fullCoverage is on" in checked.out


MIXED = {"source": "inline", "switches": {"core": {"switches": ["spine", "rackx"]}, "spine": {"switches": ["l1"]},
                                          "l1": {"nodes": ["gpu-[01-02]"]}, "rackx": {"nodes": ["gpu-[03-04]"]}}}


def test_mixed_depth_accepted_is_a_warning_in_render_and_a_note_in_check(tmp_path):
    root = str(project(tmp_path, {**MIXED, "allowMixedDepth": True}))
    rendered = run("render", "test", "--project", root, "--out", str(tmp_path / "deploy"))
    assert rendered.code == 0 and "more than one tier above its child 'rackx'" in rendered.err
    checked = run("check", "test", "--project", root)
    assert checked.code == 0, checked.out
    assert "NOTE" in checked.out and "allowMixedDepth is on" in checked.out


def test_mixed_depth_refused_is_the_rule_s_violation_in_check(tmp_path):
    root = str(project(tmp_path, MIXED))
    assert run("validate", "test", "--project", root).code == 2
    checked = run("check", "test", "--project", root)
    assert checked.code == 1 and "hypernode-tree-valid" in checked.out and "allowMixedDepth" in checked.out
