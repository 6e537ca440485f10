"""A Deployment's scheduling.volcano.sh/group-min-member is read as Volcano's PodGroup controller
parses it (v1.15.1 getMinMemberFromUpperRes: strconv.ParseInt(v, 10, 32); an error or a negative
value leaves the default), not as Python's int() would."""
from __future__ import annotations

import pytest

from modules.semantics.workloads import workload_of


def _deployment(value: object) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "serve", "namespace": "t",
                         "annotations": {"scheduling.volcano.sh/group-min-member": value}},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c"}]}}}}


@pytest.mark.parametrize("value, pods", [
    ("6", 6), ("+6", 6),                    # Go's ParseInt takes one leading sign
    (" 6", 2), ("6 ", 2), ("٦", 2), ("6_0", 2), ("2147483648", 2), ("-6", 2), ("", 2),   # errors: the replicas
])
def test_group_min_member_is_parsed_as_go_parses_it(value, pods):
    assert workload_of(_deployment(value), []).min_member == pods
