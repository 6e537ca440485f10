"""Volcano's scheduler ``Resource`` (``modules/core/vocabulary/resource.py``) against upstream's
own tables (``tables/volcano_resource_info.yaml``: volcano-sh/volcano v1.15.1
``pkg/scheduler/api/resource_info_test.go``), one test per upstream case, plus the behaviours
the simulator and the queue webhook rely on that upstream's tables leave out."""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from modules.core.quantity import parse_quantity
from modules.core.vocabulary import resource as res

TABLES = yaml.safe_load((Path(__file__).parent / "tables" / "volcano_resource_info.yaml").read_text())


def _cases():
    for table in TABLES["tables"]:
        for case in table["cases"]:
            yield pytest.param(table, case, id=f"{table['test']}.{case['name']}")


def _run(table: dict, case: dict):
    method, default = table["method"], table["default"]
    r1, r2 = case.get("resource1"), case.get("resource2")
    if method == "NewResource":
        return res.new_resource({k: parse_quantity(v) for k, v in case["resourceList"].items()}), case["expected"]
    if method == "Add":
        return res.add(r1, r2), case["expected"]
    if method == "Sub":
        return res.sub(r1, r2), case["expected"]
    if method == "IsZero":
        return res.is_zero(case["resource"], case["resourceName"]), case["expected"]
    if method in ("LessEqual", "LessPartly", "Less"):
        fn = {"LessEqual": res.less_equal, "LessPartly": res.less_partly, "Less": res.less}[method]
        return fn(r1, r2, default), case["expected"]
    if method == "LessEqualWithResourcesName":
        return sorted(res.less_equal_names(r1, r2, default)), sorted(case["expected"])
    if method == "LessEqualWithDimensionAndResourcesName":
        return res.less_equal_with_dimension(r1, r2, case["req"]), (case["expectedFlag"],
                                                                    case["expectedResourceNames"])
    if method in ("GreaterPartlyWithDimension", "GreaterPartlyWithRelevantDimensions"):
        fn = res.greater_partly_with_dimension if method == "GreaterPartlyWithDimension" else \
            res.greater_partly_with_relevant_dimensions
        flag, names = fn(case["r"], case["rr"], case["req"])
        return (flag, sorted(names)), (case["wantBool"], sorted(case.get("wantNames") or []))
    if method == "MinDimensionResource":
        return res.min_dimension(r1, r2, default), case["expected"]
    if method == "String":
        return res.to_string(case["resource"]), case["expected"]
    raise AssertionError(f"no runner for {method}")


def _same(got, want):
    if isinstance(want, dict):       # cpu and memory are never absent: 0 reads as absent
        keys = set(got) | set(want)
        return all(got.get(k, 0.0) == want.get(k, 0.0) for k in keys) and \
            {k for k in got if k not in ("cpu", "memory")} == {k for k in want if k not in ("cpu", "memory")}
    return got == want


@pytest.mark.parametrize("table, case", list(_cases()))
def test_upstream_resource_info_case(table, case):
    got, want = _run(table, case)
    assert _same(got, want), f"{table['method']}: got {got!r}, upstream expects {want!r}"


def test_tables_cover_the_operations_the_ports_use():
    methods = {t["method"] for t in TABLES["tables"]}
    assert {"NewResource", "Add", "Sub", "LessEqual", "LessPartly", "IsZero",
            "LessEqualWithDimensionAndResourcesName", "GreaterPartlyWithRelevantDimensions",
            "MinDimensionResource", "String"} <= methods
    assert sum(len(t["cases"]) for t in TABLES["tables"]) >= 80


def test_new_resource_units_and_names_the_scheduler_drops():
    r = res.new_resource({"cpu": Decimal("1.5"), "memory": Decimal(2**30), "pods": Decimal(3),
                          "nvidia.com/gpu": Decimal(8), "requests.cpu": Decimal(9), "count/pods": Decimal(1),
                          "storage": Decimal(5)})
    assert r == {"cpu": 1500.0, "memory": float(2**30), "pods": 3.0, "nvidia.com/gpu": 8000.0}


def test_new_resource_rounds_up_as_quantity_value_does():
    assert res.new_resource({"cpu": Decimal("0.0001"), "memory": Decimal("0.5")}) == {"cpu": 1.0, "memory": 1.0}


def test_is_empty_counts_scalars_but_not_pods():
    assert res.is_empty({"pods": 5.0})
    assert res.is_empty({"cpu": 0.05, "nvidia.com/gpu": 0.09})
    assert not res.is_empty({"nvidia.com/gpu": 1000.0})
    assert not res.is_empty({"memory": 1.0})


def test_less_equal_tolerates_a_tenth_of_a_unit():
    assert res.less_equal({"cpu": 1000.05}, {"cpu": 1000.0})
    assert not res.less_equal({"cpu": 1000.2}, {"cpu": 1000.0})
    assert not res.less_equal({"nvidia.com/gpu": 1000.0}, {"cpu": 8000.0})              # absent: zero
    assert res.less_equal({"nvidia.com/gpu": 1000.0}, {"cpu": 8000.0}, res.INFINITY)   # absent: unbounded


def test_fit_delta_takes_a_margin_on_each_requested_dimension():
    delta = res.fit_delta({"cpu": 4000.0, "memory": 100.0}, {"cpu": 4000.0, "nvidia.com/gpu": 1000.0})
    assert delta == pytest.approx({"cpu": -0.1, "memory": 100.0, "nvidia.com/gpu": -1000.1})
    assert delta["cpu"] < 0                 # an exact fit does not fit: the margin


def test_multi_scales_every_dimension_and_leaves_the_argument():
    given = {"cpu": 1000.0, "nvidia.com/gpu": 2000.0}
    assert res.multi(given, 1.5) == {"cpu": 1500.0, "nvidia.com/gpu": 3000.0}
    assert given == {"cpu": 1000.0, "nvidia.com/gpu": 2000.0}


def test_sub_leaves_scalars_alone_when_the_left_side_has_none():
    # sub on a Resource whose ScalarResources map is nil changes only cpu and memory
    assert res.sub({"cpu": 2000.0}, {"cpu": 1000.0, "nvidia.com/gpu": 1000.0}) == {"cpu": 1000.0}


# --- the queue webhook reads its hierarchy through this Resource --------------------------------

def _q(name: str, parent: str | None = None, **spec) -> dict:
    if parent:
        spec["parent"] = parent
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": spec}


def _queue_messages(queue: dict, *others: dict) -> list[str]:
    from modules.upstream.cluster import Cluster
    from modules.upstream.volcano.queue import validate_queue
    return [e.message() for e in validate_queue(queue, "CREATE", None, Cluster(objects=(queue, *others)))]


def test_queue_sums_show_pods_as_a_count_in_go_resource_string():
    # validateSiblingsSum prints api.Resource's String(): every scalar, pods included, in its unit
    parent = _q("p", deserved={"cpu": "1", "pods": "10"})
    child = _q("c", "p", deserved={"cpu": "2", "pods": "4"})
    [message] = _queue_messages(child, parent)
    assert message.endswith("parent queue p validation failed: sum of children's deserved (cpu 2000.00, "
                            "memory 0.00, pods 4.00) exceeds parent's deserved limit (cpu 1000.00, memory 0.00, "
                            "pods 10.00)")


def test_queue_sums_refuse_a_scalar_the_parent_does_not_name():
    # LessPartly(total, Zero): a scalar only the children's sum has is above the parent's (absent: 0)
    parent = _q("p", deserved={"cpu": "10"})
    child = _q("c", "p", deserved={"cpu": "1", "nvidia.com/gpu": "1"})
    [message] = _queue_messages(child, parent)
    assert "sum of children's deserved (cpu 1000.00, memory 0.00, nvidia.com/gpu 1000.00) exceeds" in message
    assert _queue_messages(_q("c", "p", deserved={"cpu": "1"}), parent) == []


def test_device_counts_are_whole_numbers_without_units():
    from modules.core.vocabulary.resource_names import is_device_count

    assert all(is_device_count(v) for v in (0, 8, "8", "016"))
    assert not any(is_device_count(v) for v in (True, -1, "-1", 8.0, "1.5", "100Gi", "²", "٣", "", None))
