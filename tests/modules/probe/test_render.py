"""The probe in the cluster: placement crosses exactly the tier it measures; the objects validate."""
from __future__ import annotations

import json
import re

import pytest

from modules.core.config import build_stack, load_project
from modules.core.context import RenderContext
from modules.core.errors import InputError
from modules.core.render import render
from modules.fabric.model import Fabric, NodePool
from modules.probe import render as probe
from tests.support import crds
from tests.support.cli import ROOT

from tests.support.observability import SHIPPED, bundle, stack

MEASURE_SCRIPT = (ROOT / "modules" / "probe" / "measure.py").read_text()


def probe_jobs(b) -> list[dict]:
    """The Volcano Jobs of a bundle: rendered directly, or the launcher's templates."""
    jobs = [r.obj for r in b.resources if r.module == "probe" and r.kind == "Job"
            and r.api_version.startswith("batch.volcano.sh")]   # not the workloads module's jobs
    cm = b.get(f"ConfigMap/{probe_namespace(b)}/fabric-probe")
    jobs += [json.loads(v) for k, v in sorted(cm.obj["data"].items()) if k.endswith(".json")]
    return jobs


def probe_namespace(b) -> str:
    return next(r.namespace for r in b.resources if r.module == "probe")


def tier_of(job) -> str:
    return job["metadata"]["labels"][probe.TIER_LABEL]


def nodes_of(task) -> list[str] | None:
    terms = (task["template"]["spec"].get("affinity", {}).get("nodeAffinity", {})
             .get("requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms"))
    if not terms:
        return None
    (term,) = terms
    (expr,) = term["matchFields"]
    assert expr["key"] == "metadata.name" and expr["operator"] == "In"
    return expr["values"]


@pytest.mark.parametrize("name", SHIPPED)
def test_every_tier_is_probed_and_placement_crosses_exactly_that_tier(name):
    b = bundle(name)
    fabric = b.fabric
    jobs = {tier_of(j): j for j in probe_jobs(b)}
    assert set(jobs) == {"node"} | {fabric.tier_names[t] for t in fabric.tiers}
    for tier_name, job in jobs.items():
        tier = 0 if tier_name == "node" else fabric.tier_of_name(tier_name)
        spec = job["spec"]
        tasks = {t["name"]: t for t in spec["tasks"]}
        if tier == 0:
            assert list(tasks) == ["a"] and "networkTopology" not in spec and spec["minAvailable"] == 1
            continue
        assert spec["networkTopology"] == {"mode": "hard", "highestTierAllowed": tier}
        assert list(tasks) == ["a", "b"] and spec["minAvailable"] == 2
        assert all(t["replicas"] == 1 for t in tasks.values())
        a, b_ = nodes_of(tasks["a"]), nodes_of(tasks["b"])
        if tier == 1:
            # the hard tier keeps both in one leaf; anti-affinity on the hostname forbids one node
            assert a is None and b_ is None
            anti = tasks["a"]["template"]["spec"]["affinity"]["podAntiAffinity"]
            (term,) = anti["requiredDuringSchedulingIgnoredDuringExecution"]
            assert term["topologyKey"] == "kubernetes.io/hostname"
            run = tasks["a"]["template"]["metadata"]["labels"][probe.RUN_LABEL]
            assert term["labelSelector"]["matchLabels"] == {probe.RUN_LABEL: run}
            assert tasks["b"]["template"]["metadata"]["labels"][probe.RUN_LABEL] == run
            continue
        # any node a may get and any node b may get meet exactly at this tier
        assert a and b_ and not set(a) & set(b_)
        meet = {fabric.lca(fabric.nodes[x].leaf, fabric.nodes[y].leaf).tier for x in a for y in b_}
        assert meet == {tier}, f"{name} {tier_name}: pods could meet at tiers {meet}"


@pytest.mark.parametrize("name", SHIPPED)
def test_jobs_validate_and_pods_are_well_formed(name):
    b = bundle(name)
    transport = stack(name).values["nccl"]["transport"]
    pool = probe.probe_pool(RenderContext(stack(name), b.fabric))
    for job in probe_jobs(b):
        if "name" in job["metadata"]:
            crds.validate_cr(job)
        else:   # a launcher template: valid once the API server fills in the name
            crds.validate_cr({**job, "metadata": {**job["metadata"], "name": "fabric-probe-x-abcde"}})
        queue = stack(name).values["probe"]["queue"]
        assert job["spec"]["schedulerName"] == "volcano" and job["spec"]["queue"] == queue
        for task in job["spec"]["tasks"]:
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", **task["template"]["metadata"]},
                   "spec": task["template"]["spec"]}
            crds.validate_core(pod)
            (container,) = pod["spec"]["containers"]
            assert not container["image"].endswith(":latest") and ":" in container["image"]
            assert container["envFrom"] == [{"configMapRef": {"name": f"nccl-{transport}"}}]
            assert container["resources"]["limits"][pool.gpu_resource] == str(pool.gpus)
            for extended, count in pool.resources.items():
                assert container["resources"]["limits"][extended] == str(count)
            script = container["command"][-1]
            assert f"--nproc-per-node {pool.gpus}" in script and "--backend nccl" in script
            assert f"--tier {job['metadata']['labels'][probe.TIER_LABEL]}" in script
            if len(job["spec"]["tasks"]) == 2:
                env = {e["name"]: e for e in container["env"]}
                assert env["MASTER_ADDR"]["value"] == "$(JOB_NAME)-a-0.$(JOB_NAME)"
                assert env["NODE_RANK"]["value"] == str(["a", "b"].index(task["name"]))
                assert job["spec"]["plugins"]["svc"] == []
            tolerations = pod["spec"].get("tolerations", [])
            assert len(tolerations) == len(pool.taints)


@pytest.mark.parametrize("name", SHIPPED)
def test_configmap_ships_the_runtime_unchanged(name):
    b = bundle(name)
    cm = b.get(f"ConfigMap/{probe_namespace(b)}/fabric-probe")
    assert cm.obj["data"]["probe.py"] == MEASURE_SCRIPT
    assert probe_namespace(b) in stack(name).values["trainingNamespaces"]


def test_scheduled_stacks_launch_jobs_from_a_cronjob():
    scheduled = [n for n in SHIPPED if stack(n).values["probe"]["schedule"]]
    assert scheduled and len(scheduled) < len(SHIPPED)   # prod probes on a schedule, dev runs once
    for name in scheduled:
        b = bundle(name)
        ns = probe_namespace(b)
        cron = b.get(f"CronJob/{ns}/fabric-probe").obj
        assert cron["spec"]["schedule"] == stack(name).values["probe"]["schedule"]
        assert cron["spec"]["concurrencyPolicy"] == "Forbid"
        pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == "fabric-probe-launcher"
        templates = [a for a in pod["containers"][0]["command"] if a.endswith(".json")]
        data = b.get(f"ConfigMap/{ns}/fabric-probe").obj["data"]
        assert sorted(t.rsplit("/", 1)[1] for t in templates) == sorted(k for k in data if k.endswith(".json"))
        assert data["launch.py"] == (ROOT / "modules" / "probe" / "launcher.py").read_text()
        role = b.get(f"Role/{ns}/fabric-probe-launcher").obj
        assert role["rules"] == [{"apiGroups": ["batch.volcano.sh"], "resources": ["jobs"],
                                  "verbs": ["create", "get", "delete"]}]
        for key in (f"Job/{ns}/fabric-probe-leaf",):
            assert b.get(key) is None
        for job in probe_jobs(b):
            assert job["metadata"]["generateName"].startswith("fabric-probe-")
            assert job["spec"]["ttlSecondsAfterFinished"] == 86400
            assert "__RUN_ID__" in json.dumps(job)


# --- a label-defined fabric (Volcano discovers HyperNodes from node labels) ----------------------

def label_fabric() -> Fabric:
    pool = NodePool("h100", re.compile(".*"), 8, "nvidia.com/gpu", "H100", 192000, 1 << 40, {})
    discovery = [{"source": "label", "enabled": True, "config": {"networkTopologyTypes": {"rail": [
        {"nodeLabel": "example.com/spine"}, {"nodeLabel": "example.com/leaf"},
        {"nodeLabel": "kubernetes.io/hostname"}]}}}]
    return Fabric("labels", {1: "example.com/leaf", 2: "example.com/spine"}, {}, {}, {"h100": pool},
                  discovery=discovery)


def test_label_fabric_uses_pod_affinity_on_the_tier_labels():
    fabric = label_fabric()
    assert probe.discovery_labels(fabric) == {1: "example.com/leaf", 2: "example.com/spine"}
    tiers = {t.number: t for t in probe.available_tiers(fabric)}
    assert [t.name for t in tiers.values()] == ["node", "example.com/leaf", "example.com/spine"]
    spine = probe.placement(fabric, tiers[2], fabric.pools["h100"], 64)
    assert spine.apart_on == "example.com/leaf" and spine.together_on == "example.com/spine"
    assert spine.nodes == {"a": None, "b": None}
    leaf = probe.placement(fabric, tiers[1], fabric.pools["h100"], 64)
    assert leaf.apart_on == "kubernetes.io/hostname" and leaf.together_on is None
    assert tiers[2].slug == "example-com-spine"
    job = probe.volcano_job(RenderContext(stack("dev"), fabric), spine, fabric.pools["h100"],
                            "fabric-probe-example-com-spine", "run-1", scheduled=False)
    crds.validate_cr(job)
    assert job["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 2}
    for task in job["spec"]["tasks"]:
        affinity = task["template"]["spec"]["affinity"]
        assert "nodeAffinity" not in affinity
        (apart,) = affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        (together,) = affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert (apart["topologyKey"], together["topologyKey"]) == ("example.com/leaf", "example.com/spine")
        assert apart["labelSelector"] == {"matchLabels": {probe.RUN_LABEL: "run-1"}}


# --- configuration errors -----------------------------------------------------------------------

def render_with(**sections):
    base = dict(stack("dev").given)
    base.update(sections)
    return render(build_stack(load_project(ROOT), "dev", {f"trainstack:{k}": v for k, v in base.items()},
                              "stacks/Pulumi.dev.yaml"))


@pytest.mark.parametrize("section, path, words", [
    ({"namespace": "default"}, "trainstack:probe.namespace", "training namespaces"),
    ({"sizes": "1MiB-1XB"}, "trainstack:probe.sizes", "1MiB"),
    ({"tiers": ["rack"]}, "trainstack:probe.tiers[0]", "node, leaf, spine"),
    ({"pool": "b200"}, "trainstack:probe.pool", "default"),
    ({"image": "pytorch/pytorch:latest"}, "trainstack:probe.image", "not :latest"),
    ({"image": "pytorch/pytorch"}, "trainstack:probe.image", "pinned"),
    ({"schedule": "every hour"}, "trainstack:probe.schedule", "cron"),
])
def test_bad_probe_settings_name_the_path(section, path, words):
    with pytest.raises(InputError) as err:
        render_with(probe=section)
    assert path in str(err.value) and words in str(err.value)


def test_only_selected_tiers_are_probed_and_alerted():
    b = render_with(probe={"tiers": ["spine"]})
    assert [tier_of(j) for j in probe_jobs(b)] == ["spine"]
    alerts = [r for g in (x.obj["spec"]["groups"] for x in b.resources if x.kind == "PrometheusRule")
              for gr in g for r in gr["rules"] if r["alert"] == "FabricProbeBandwidthLow"]
    assert [r["labels"]["tier"] for r in alerts] == ["spine"]


def test_disabled_probe_renders_nothing_and_no_probe_alerts():
    b = render_with(probe={"enabled": False})
    assert not [r for r in b.resources if r.module == "probe"]
    groups = [g["name"] for r in b.resources if r.kind == "PrometheusRule" for g in r.obj["spec"]["groups"]]
    assert "trainstack-fabric-probe" not in groups


def _probe_stack(probe_cfg: dict):
    return build_stack(load_project(ROOT), "mem", {"trainstack:fabric": {"source": "generated"},
                                                   "trainstack:probe": probe_cfg}, "stacks/Pulumi.mem.yaml")


def test_pushgateway_with_credentials_comes_from_a_secret():
    """A credential never lands in deploy/: render refuses it inline, and reads it from a Secret."""
    with pytest.raises(InputError, match="looks like a credential") as err:
        render(_probe_stack({"pushgateway": "https://probe:hunter2@push.example.com"}))
    assert "hunter2" not in str(err.value)
    b = render(_probe_stack({"pushgatewaySecret": {"name": "pushgateway", "key": "url"}}))
    for job in probe_jobs(b):
        for task in job["spec"]["tasks"]:
            container = task["template"]["spec"]["containers"][0]
            assert '--pushgateway "$TRAINSTACK_PUSHGATEWAY"' in container["command"][-1]
            assert {"name": "TRAINSTACK_PUSHGATEWAY",
                    "valueFrom": {"secretKeyRef": {"name": "pushgateway", "key": "url"}}} in container["env"]
    with pytest.raises(InputError, match="not both"):
        render(_probe_stack({"pushgateway": "http://push:9091", "pushgatewaySecret": {"name": "p", "key": "u"}}))
