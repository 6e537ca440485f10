"""Volcano's MutatingAdmissionPolicies count only where the chart installs them.

volcano-sh/volcano v1.15.1 installer/helm/chart/volcano/templates/mutating_admission_policy.yaml
installs policy/{jobs,queues,podgroups,pods}-mutating.yaml only `if .Values.custom.map_enable`
(values.yaml: `map_enable: false`), as validating_admission_policy.yaml installs the VAPs only with
`vap_enable`. The pod policy sets `schedulerName: volcano` on a pod annotated
`volcano.sh/resource-group: default`; the pod VAP refuses both `volcano.sh/jdb-*` annotations only on
pods whose schedulerName is volcano. So with the VAPs on and the MAPs off (trainstack's stacks render
`vap_enable` and never `map_enable`) such a pod is admitted; with both on it is refused.
"""
from __future__ import annotations

import pytest

from modules.upstream.install import CHART_DEFAULTS, EVERY_WEBHOOK, install_of
from policies.framework import CheckContext
from policies.runner import PolicySettings, run_rules
from policies.rules import BY_ID
from tests.support.admission import admission_env, require_shared_dirs

RULE = BY_ID["upstream-admission"]

POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "jdb-rg", "namespace": "research",
                    "annotations": {"volcano.sh/resource-group": "default", "volcano.sh/jdb-min-available": "1",
                                    "volcano.sh/jdb-max-unavailable": "1"}},
       "spec": {"containers": [{"name": "w", "image": "registry.example.com/tools/app:1.4.2"}]}}


def release(**custom) -> dict:
    return {"apiVersion": "helm.sh/v3", "kind": "Release",
            "metadata": {"name": "volcano", "namespace": "volcano-system"},
            "spec": {"chart": "volcano", "values": {"custom": custom}}}


@pytest.fixture(scope="module")
def dirs():
    admission, crds = require_shared_dirs()
    with admission_env(admission, crds):
        yield admission, crds


def _pod_policy_findings(objects: list[dict]) -> list:
    return [v for v in run_rules(objects, CheckContext(), PolicySettings(), [RULE])
            if "pod-validation-policy" in v.message]


def test_install_reads_map_enable_and_defaults_to_the_chart():
    assert install_of([release(map_enable=True)]).map is True
    assert install_of([release(vap_enable=True)]).map is False
    assert install_of([]).map is False and CHART_DEFAULTS.map is False
    assert EVERY_WEBHOOK.map is True


def test_pod_mutation_policy_applies_only_with_map_enable(dirs):
    # VAPs on, MAPs off (the chart's default for map_enable): schedulerName stays unset, the pod VAP admits.
    assert _pod_policy_findings([POD, release(vap_enable=True)]) == []
    # Both installed: the pod MAP sets schedulerName volcano, so the pod VAP refuses the two annotations.
    [found] = _pod_policy_findings([POD, release(vap_enable=True, map_enable=True)])
    assert '"not allow configure multiple annotations at same time"' in found.message


def test_a_stack_never_applies_the_mutating_policies(dirs):
    """The prod stack renders vap_enable (true) and no map_enable: the same pod is admitted."""
    from modules.core.config import load_project, load_stack
    from modules.core.render import render
    from policies.runner import bundle_objects
    from tests.support.cli import ROOT

    objects = bundle_objects(render(load_stack(load_project(ROOT), "prod")))
    assert install_of(objects).vap is True and install_of(objects).map is False
    assert _pod_policy_findings([*objects, POD]) == []
