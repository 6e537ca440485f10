"""The reconcile loop is stable: apply what each engine delivers, let the HPA scale its targets to 6,
apply again as the engine does (server-side apply; Pulumi's ignoreChanges, Argo CD's
ignoreDifferences with RespectIgnoreDifferences, Flux's ssa annotation honoured as documented), and
nothing changes: the replicas stay 6 and the Volcano Job and Queue the webhooks defaulted are
untouched. Each mechanism taken away, the same loop resets the HPA's value (or, for Pulumi, stops on
the conflict), so the model can tell a fight from peace."""
from __future__ import annotations

import copy
import functools

import pytest
import yaml

from modules.core.config import pulumi_config_map
from modules.core.output import bundle_files
from modules.core.preview_engine import run_program
from modules.core.render import render
from modules.semantics.owned import FLUX_SSA, scaled_targets
from tests.support.apply import Conflict, Store, argocd_sync, flux_reconcile, get, key_of, pulumi_up
from tests.support.cli import ROOT
from tests.support.stacks import shipped, variant

LEGACY_HPA = shipped("legacy").given["autoscaling"]["hpas"][0]
SECTIONS = {
    "workloads": {
        "deployments": [{"name": "serve", "namespace": "training", "queue": "elastic", "replicas": 2,
                         "image": "vllm/vllm-openai:v0.11.0", "port": 8000}],
        "volcanoJobs": [{"name": "burnin", "namespace": "training", "queue": "elastic", "replicas": 2,
                         "image": "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
                         "command": ["torchrun", "/workspace/burnin.py"]}],
    },
    "autoscaling": {"hpas": [LEGACY_HPA, {"namespace": "training", "target": {"kind": "Deployment", "name": "serve"},
                                          "minReplicas": 2, "maxReplicas": 8,
                                          "metrics": [{"name": "vllm_requests_waiting", "averageValue": 16}]}]},
}
GITOPS = {"none": {"engine": "none"}, "flux": {"engine": "flux"},
          "argocd": {"engine": "argocd", "repoURL": "https://git.example.com/platform.git"}}
SCALED = 6


@functools.lru_cache(maxsize=None)
def stack(engine: str):
    return variant("legacy", f"owned-{engine}", **SECTIONS, gitops=GITOPS[engine])


@functools.lru_cache(maxsize=None)
def delivered(engine: str) -> tuple[list[dict], dict]:
    """What the engine applies, in order, and how: ``none`` the Pulumi program's registrations (under
    mocks) with their ignoreChanges; Argo CD and Flux the files `trainstack render` writes."""
    st = stack(engine)
    bundle = render(st)
    if engine == "none":
        regs = {r.name: r for r in run_program(ROOT, st.name, pulumi_config_map(st))}
        objects = [regs[r.key].inputs for r in bundle.resources]
        return objects, {"ignore": {r.key: regs[r.key].ignore_changes for r in bundle.resources}}
    files = {path: [d for d in yaml.safe_load_all(data) if d is not None]
             for path, data in bundle_files(bundle, st.file).items()}
    objects = [files[path][0] for path in files["kustomization.yaml"][0]["resources"]]
    extra = {"application": files["argocd/application.objects.yaml"][0]} if engine == "argocd" else {}
    return objects, extra


def apply_all(engine: str, store: Store, objects: list[dict], extra: dict) -> list[bool]:
    changed = []
    for obj in objects:
        if engine == "none":
            key = "/".join(x for x in (obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"]) if x)
            changed.append(pulumi_up(store, obj, extra["ignore"].get(key, ())))
        elif engine == "argocd":
            changed.append(argocd_sync(store, obj, extra["application"]))
        else:
            changed.append(flux_reconcile(store, obj))
    return changed


def scale_to(store: Store, objects: list[dict], replicas: int) -> list:
    scaled = list(scaled_targets(objects))
    for s in scaled:
        store.update(key_of(s.target), tuple(s.field.path.split(".")), replicas)
    return scaled


@pytest.mark.parametrize("engine", sorted(GITOPS))
def test_reconcile_leaves_the_hpa_its_replicas(engine):
    objects, extra = delivered(engine)
    store = Store()
    assert all(apply_all(engine, store, objects, extra))            # created
    scaled = scale_to(store, objects, SCALED)
    assert {(s.target["kind"], s.field.path) for s in scaled} == {
        ("PyTorchJob", "spec.pytorchReplicaSpecs.Worker.replicas"), ("Deployment", "spec.replicas")}
    before = copy.deepcopy(store.objects)
    assert not any(apply_all(engine, store, objects, extra))        # the second apply is a no-op
    assert store.objects == before
    for s in scaled:
        assert get(store.get(s.target), tuple(s.field.path.split("."))) == SCALED


@pytest.mark.parametrize("engine", sorted(GITOPS))
def test_webhook_defaults_are_rendered(engine):
    """The Volcano Job and Queue are stored exactly as delivered: the webhooks add nothing, so the first
    diff after apply is empty; without the rendered defaults the same create would add them."""
    objects, extra = delivered(engine)
    store = Store()
    apply_all(engine, store, objects, extra)
    volcano = [o for o in objects if o["kind"] in ("Job", "Queue") and "volcano.sh" in o["apiVersion"]]
    assert {o["kind"] for o in volcano} == {"Job", "Queue"}
    for obj in volcano:
        assert store.get(obj) == obj
    job = next(o for o in volcano if o["kind"] == "Job")
    bare = copy.deepcopy(job)
    del bare["spec"]["maxRetry"], bare["spec"]["tasks"][0]["maxRetry"]
    fresh = Store()
    fresh.apply(bare, "someone")
    assert fresh.get(bare) != bare and fresh.get(bare)["spec"]["maxRetry"] == 3


def without_mechanism(engine: str, objects: list[dict], extra: dict) -> tuple[list[dict], dict]:
    """The same delivery with the engine's ignore mechanism taken away and the Deployment's replicas
    set in the manifest, as a naive render would write them."""
    objects = copy.deepcopy(objects)
    for obj in objects:
        if obj["kind"] == "Deployment" and obj["metadata"]["name"] == "serve":
            obj["spec"]["replicas"] = 2
        obj["metadata"].get("annotations", {}).pop(FLUX_SSA, None)
    if engine == "none":
        return objects, {"ignore": {}}
    if engine == "argocd":
        app = copy.deepcopy(extra["application"])
        app["spec"]["syncPolicy"]["syncOptions"].remove("RespectIgnoreDifferences=true")
        return objects, {"application": app}
    return objects, extra


@pytest.mark.parametrize("engine", sorted(GITOPS))
def test_without_the_mechanism_the_apply_fights(engine):
    objects, extra = without_mechanism(engine, *delivered(engine))
    store = Store()
    apply_all(engine, store, objects, extra)
    scaled = scale_to(store, objects, SCALED)
    if engine == "none":   # pulumi-kubernetes applies without force: the HPA's field is a conflict
        with pytest.raises(Conflict, match="horizontal-pod-autoscaler"):
            apply_all(engine, store, objects, extra)
        return
    apply_all(engine, store, objects, extra)
    assert [get(store.get(s.target), tuple(s.field.path.split("."))) for s in scaled] == [2, 2]
