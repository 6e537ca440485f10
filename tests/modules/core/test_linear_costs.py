"""Hostile sizes cost linear time: each shape at 10,000 elements, bounded in CPU time (generous,
and a busy machine does not use it up), never in wall-clock time. The quadratic or cubic forms
these replaced took minutes at this size."""
from __future__ import annotations

import time

import yaml

CPU_SECONDS = 5.0


def _cpu(work) -> float:
    started = time.process_time()
    work()
    return time.process_time() - started


def test_locating_10000_findings_in_a_mapping_of_10000_keys():
    """A PyTorchJob with 10,000 replica types: each finding's line is one lookup per path segment,
    not a scan of the 10,000 keys (that was 10^8 comparisons)."""
    from policies.locate import documents, find

    text = "spec:\n  types:\n" + "".join(f"    T{i}: {{replicas: {i}}}\n" for i in range(10_000))
    node = documents(text)[0]
    lines: list[int] = []
    spent = _cpu(lambda: lines.extend(find(node, f"spec.types.T{i}.replicas")[0] for i in range(10_000)))
    assert lines == [i + 3 for i in range(10_000)]
    assert spent < CPU_SECONDS, spent


def test_a_key_with_dots_is_still_found_whole():
    from policies.locate import documents, find

    node = documents("metadata:\n  annotations:\n    a.b/c.d: x\n    a: {b: y}\n")[0]
    assert find(node, "metadata.annotations.a.b/c.d") == (3, 5)
    assert find(node, "metadata.annotations.a.b") == (4, 9)


def test_a_queue_chain_10000_deep_meets_its_own_create_in_linear_time():
    """The cluster a Queue meets at its CREATE leaves out its descendants: one walk down from it,
    not a walk up from every queue (cubic over a chain's creates: 1,000 deep took 40 s)."""
    from policies.admission.webhook_check import _without_descendants

    chain = tuple({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": f"q{i}"},
                   "spec": {"parent": f"q{i - 1}" if i else "root"}} for i in range(10_000))
    kept: list[tuple] = []
    spent = _cpu(lambda: kept.extend(_without_descendants(chain, f"q{i}") for i in (0, 5_000, 9_999)))
    assert [len(k) for k in kept] == [1, 5_001, 10_000]
    assert spent < CPU_SECONDS, spent


def test_a_parent_cycle_leaves_out_the_queue_itself_as_before():
    from policies.admission.webhook_check import _without_descendants

    pairs = (("a", "b"), ("b", "a"))
    cycle = tuple({"kind": "Queue", "metadata": {"name": n}, "spec": {"parent": p}} for n, p in pairs)
    assert _without_descendants(cycle, "a") == ()


def test_a_cyclic_alias_is_refused_before_any_walk():
    import pytest

    from modules.core import yamlio
    from modules.core.errors import InputError

    for text in ("a: &a [1, *a]\n", "a: &a {b: [*a]}\n"):
        with pytest.raises(InputError, match="a cycle"):
            yamlio.loads(text, "f.yaml")
    assert yaml.safe_load("a: &a [1]\nb: *a\n") == yamlio.loads("a: &a [1]\nb: *a\n", "f.yaml")


def _all_rules(objects: list[dict]) -> list:
    from policies.framework import CheckContext
    from policies.runner import PolicySettings, run_rules

    return run_rules(objects, CheckContext(profile="standard"), PolicySettings())


def test_10000_hpas_on_one_deployment_are_judged_in_linear_time():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "training"},
                  "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                      "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i:1"}]}}}}
    hpas = [{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
             "metadata": {"name": f"h{i}", "namespace": "training"},
             "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                      "minReplicas": 1, "maxReplicas": 2}} for i in range(10_000)]
    found: list = []
    spent = _cpu(lambda: found.extend(_all_rules([deployment, *hpas])))
    assert "requests-required" in {v.rule for v in found}   # every rule ran over the 10,001 objects
    assert spent < 2 * CPU_SECONDS, spent


def test_a_hypernode_with_10000_duplicate_members_is_judged_in_linear_time():
    member = {"type": "Node", "selector": {"exactMatch": {"name": "n1"}}}
    hypernode = {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "hn"},
                 "spec": {"tier": 1, "members": [dict(member) for _ in range(10_000)]}}
    spent = _cpu(lambda: _all_rules([hypernode]))
    assert spent < CPU_SECONDS, spent
