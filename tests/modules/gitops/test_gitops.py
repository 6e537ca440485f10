"""GitOps engines: the Argo CD and Flux objects validate against the upstream CRDs, build with
kustomize, and order charts -> cluster objects -> Queues (Open) -> what needs them."""
from __future__ import annotations

import functools
import shutil
import subprocess

import pytest
import yaml

from modules.core.bundle import ChartRelease
from modules.core.config import load_project, load_stack
from modules.core.errors import InputError
from modules.core.output import bundle_files
from modules.core.render import render
from modules.gitops.render import PHASE_ANNOTATION, WAVE_ANNOTATION
from tests.support.stacks import variant
from tests.support import crds
from tests.support.cli import ROOT

PROJECT = load_project(ROOT)
STACKS = PROJECT.stacks()
ENGINES = {name: load_stack(PROJECT, name).section("gitops")["engine"] for name in STACKS}


@functools.lru_cache(maxsize=None)
def bundle_of(name: str):
    return render(load_stack(PROJECT, name))


@functools.lru_cache(maxsize=None)
def files_of(name: str) -> dict[str, dict]:
    """Output path -> parsed document(s), as `trainstack render` writes them."""
    out = {}
    for path, data in bundle_files(bundle_of(name), f"stacks/Pulumi.{name}.yaml").items():
        docs = [d for d in yaml.safe_load_all(data) if d is not None]
        out[path] = docs[0] if len(docs) == 1 else docs
    return out


@functools.lru_cache(maxsize=None)
def argocd_legacy():
    """The legacy stack (Training Operator v1 overlay) on Argo CD: exercises the overlay Application."""
    stack = variant("legacy", "legacy-argocd", gitops={"engine": "argocd", "repoURL": "https://git.example.com/x.git"})
    bundle = render(stack)
    return bundle, {p: yaml.safe_load(d) for p, d in bundle_files(bundle, stack.file).items()}


def kubectl(*args: str) -> subprocess.CompletedProcess:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl not installed: the kustomize builds need it")
    return subprocess.run(["kubectl", *args], capture_output=True, text=True, timeout=120)


def test_shipped_stacks_exercise_both_engines():
    assert {"argocd", "flux", "none"} <= set(ENGINES.values()), ENGINES


# --- kustomize builds ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", STACKS)
def test_kubectl_kustomize_builds_every_shipped_stack(name):
    """The committed output (kept current by the golden test) builds; the engine's folders too."""
    folder = ROOT / "deploy" / name
    result = kubectl("kustomize", str(folder))
    assert result.returncode == 0, result.stderr
    built = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert len(built) == len(bundle_of(name).resources)
    extra = {"argocd": ["argocd"], "flux": ["flux", "flux/charts"]}.get(ENGINES[name], [])
    for sub in extra:
        result = kubectl("kustomize", str(folder / sub))
        assert result.returncode == 0, (sub, result.stderr)


@pytest.mark.parametrize("name", [n for n in STACKS if ENGINES[n] == "flux"])
def test_flux_phases_split_the_objects_without_loss(name, tmp_path):
    """Build each phase Kustomization as kustomize-controller does (the stack folder plus the
    Kustomization's patches): every object lands in exactly one phase, Queues alone in theirs."""
    files = files_of(name)
    (tmp_path / "stack").symlink_to(ROOT / "deploy" / name)
    seen: dict[str, str] = {}
    for phase in ("cluster", "queues", "workloads"):
        spec = files[f"flux/kustomization.{phase}.yaml"]["spec"]
        overlay = tmp_path / phase
        overlay.mkdir()
        (overlay / "kustomization.yaml").write_text(yaml.safe_dump(
            {"resources": ["../stack"], "patches": spec["patches"]}))
        result = kubectl("kustomize", str(overlay))
        assert result.returncode == 0, result.stderr
        for obj in (d for d in yaml.safe_load_all(result.stdout) if d):
            key = f"{obj['kind']}/{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"
            assert key not in seen, (key, seen.get(key), phase)
            seen[key] = phase
            assert (obj["kind"] == "Queue") == (phase == "queues"), key
    assert len(seen) == len(bundle_of(name).resources)


# --- upstream CRDs ------------------------------------------------------------------------------

def _engine_objects(files: dict) -> list[dict]:
    out = []
    for path, doc in files.items():
        if path.startswith(("argocd/", "flux/")) and not path.endswith("/kustomization.yaml"):
            out.extend(doc if isinstance(doc, list) else [doc])
    return out


@pytest.mark.parametrize("name", [n for n in STACKS if ENGINES[n] != "none"] + ["legacy-argocd"])
def test_engine_objects_validate_against_upstream_crds(name):
    files = argocd_legacy()[1] if name == "legacy-argocd" else files_of(name)
    objects = _engine_objects(files)
    kinds = {o["kind"] for o in objects}
    assert kinds >= ({"Application", "ConfigMap"} if "argocd/root.yaml" in files
                     else {"HelmRelease", "HelmRepository", "Kustomization"}), kinds
    for obj in objects:
        if crds.is_custom(obj):
            crds.validate_cr(obj)
        else:
            crds.validate_core(obj)


# --- order --------------------------------------------------------------------------------------

def _wave(obj: dict) -> int:
    return int(obj["metadata"]["annotations"][WAVE_ANNOTATION])


def _object_annotations(bundle, files) -> dict[str, dict]:
    from modules.core.output import resource_path

    return {r.key: files[resource_path(r)]["metadata"].get("annotations", {}) for r in bundle.resources}


ARGOCD_CASES = [n for n in STACKS if ENGINES[n] == "argocd"] + ["legacy-argocd"]


@pytest.mark.parametrize("name", ARGOCD_CASES)
def test_argocd_waves_put_charts_and_namespaces_before_queues_before_jobs(name):
    bundle, files = argocd_legacy() if name == "legacy-argocd" else (bundle_of(name), files_of(name))
    apps = {p: d for p, d in files.items() if p.startswith("argocd/application.")}
    objects_app = _wave(apps.pop("argocd/application.objects.yaml"))
    chart_waves = {}
    for item in bundle.items:
        if hasattr(item, "kustomization") or isinstance(item, ChartRelease):
            app = apps[f"argocd/application.{item.name}.yaml"]
            chart_waves[item.key] = _wave(app)
            assert _wave(app) < objects_app
            for dep in bundle.dependencies[item.key]:
                if dep in chart_waves:   # a chart after the charts it needs
                    assert chart_waves[dep] < chart_waves[item.key], (item.key, dep)
            if isinstance(item, ChartRelease):
                options = app["spec"]["syncPolicy"]["syncOptions"]
                assert "CreateNamespace=true" in options and app["spec"]["destination"]["namespace"] == item.namespace
                assert app["spec"]["source"]["targetRevision"] == item.version
                assert app["spec"]["source"]["helm"]["valuesObject"] == item.values
    assert chart_waves
    notes = _object_annotations(bundle, files)
    waves = {key: int(a[WAVE_ANNOTATION]) for key, a in notes.items()}
    queues = [k for k in waves if k.startswith("Queue/")]
    assert queues and all(waves[q] == 1 for q in queues)
    assert all(waves[k] == 0 for k in waves if k.startswith("Namespace/"))
    for key, deps in bundle.dependencies.items():
        for dep in deps:
            if key in waves and dep in waves:
                assert waves[dep] <= waves[key], (key, dep)
            if dep.startswith("Queue/"):
                assert waves[key] > waves[dep], (key, dep)
    jobs = [k for k in waves if k.split("/")[0] in ("Job", "PodGroup", "TrainJob", "PyTorchJob", "CronJob")]
    assert jobs and all(waves[j] >= 2 for j in jobs), jobs   # after every Queue (wave 1)
    cm = files["argocd/argocd-cm.patch.yaml"]["data"]
    assert 'obj.status.state == "Open"' in cm["resource.customizations.health.scheduling.volcano.sh_Queue"]
    assert "resource.customizations.health.argoproj.io_Application" in cm
    children = files["argocd/kustomization.yaml"]["resources"]
    assert {p.removeprefix("argocd/") for p in apps} | {"application.objects.yaml"} <= set(children)


def test_argocd_overlay_leaves_the_root_kustomization():
    bundle, files = argocd_legacy()
    assert not any(r.startswith("overlays/") for r in files["kustomization.yaml"]["resources"])
    app = files["argocd/application.training-operator.yaml"]
    assert app["spec"]["source"]["path"] == "deploy/legacy-argocd/overlays/training-operator"
    assert "overlays/training-operator/kustomization.yaml" in files


@pytest.mark.parametrize("name", [n for n in STACKS if ENGINES[n] == "flux"])
def test_flux_dependson_chain(name):
    bundle, files = bundle_of(name), files_of(name)
    stack = name
    releases = {f"{stack}-{r.name}": r for r in bundle.releases}
    for path, doc in files.items():
        if path.startswith("flux/charts/helmrelease."):
            release = releases[doc["metadata"]["name"]]
            assert doc["spec"]["install"]["createNamespace"] is True
            assert doc["spec"]["targetNamespace"] == release.namespace and doc["spec"]["values"] == release.values
            wanted = {f"{stack}-{i.name}" for i in bundle.releases if i.key in bundle.dependencies[release.key]}
            assert {d["name"] for d in doc["spec"].get("dependsOn", [])} == wanted
            ref = doc["spec"].get("chartRef") or doc["spec"]["chart"]["spec"]["sourceRef"]
            source_kind = "OCIRepository" if release.repository.startswith("oci://") else "HelmRepository"
            assert ref["kind"] == source_kind
            source = files[f"flux/charts/{source_kind.lower()}.{release.name}.yaml"]
            if source_kind == "OCIRepository":
                assert source["spec"]["ref"]["tag"] == release.version
            else:
                assert doc["spec"]["chart"]["spec"]["version"] == release.version
    k = {p.removeprefix("flux/kustomization.").removesuffix(".yaml"): d
         for p, d in files.items() if p.startswith("flux/kustomization.") and p != "flux/kustomization.yaml"}
    deps = {n: {d["name"] for d in doc["spec"].get("dependsOn", [])} for n, doc in k.items()}
    overlays = {f"{stack}-{o.name}" for o in bundle.overlays}
    assert deps["charts"] == set()
    assert deps["cluster"] == {f"{stack}-charts"} | overlays
    assert deps["queues"] == {f"{stack}-cluster"} and deps["workloads"] == {f"{stack}-queues"}
    assert all(k[n]["spec"]["wait"] is True for n in k)
    (check,) = k["queues"]["spec"]["healthCheckExprs"]
    assert (check["apiVersion"], check["kind"]) == ("scheduling.volcano.sh/v1beta1", "Queue")
    phases = {a[PHASE_ANNOTATION] for a in _object_annotations(bundle, files).values()}
    assert phases == {"cluster", "queues", "workloads"}
    assert not any(p.startswith("charts/") for p in files)


def test_flux_queue_health_expressions_evaluate():
    """The CEL of the queues phase, run by the CEL library upstream-admission uses: Open is
    current, Closed failed, no state yet neither."""
    from modules.gitops.render import QUEUE_HEALTH_CEL
    from policies.admission.engine import Scope, compile_expr

    def run(expr: str, status: dict) -> bool:
        compiled = compile_expr(expr)
        assert compiled.program is not None, compiled.problem
        scope = Scope()
        scope.bind({"status": status})
        return bool(scope.run(compiled))   # has() guards a Queue without status yet

    assert run(QUEUE_HEALTH_CEL["current"], {"state": "Open"})
    assert not run(QUEUE_HEALTH_CEL["failed"], {"state": "Open"})
    assert run(QUEUE_HEALTH_CEL["failed"], {"state": "Closed"})
    assert not run(QUEUE_HEALTH_CEL["current"], {}) and not run(QUEUE_HEALTH_CEL["failed"], {})


# --- engine none, errors ------------------------------------------------------------------------

@pytest.mark.parametrize("name", [n for n in STACKS if ENGINES[n] == "none"])
def test_engine_none_lists_the_charts_namespaces_first(name):
    files = files_of(name)
    document = files["charts/releases.yaml"]
    assert list(document)[0] == "namespaces"
    wanted = {f"core/namespace.{r['namespace']}.yaml" for r in document["releases"]}
    assert set(document["namespaces"]) == wanted and all(p in files for p in wanted)
    assert not any(p.startswith(("argocd/", "flux/")) for p in files)
    raw = (ROOT / "deploy" / name / "charts" / "releases.yaml").read_text()
    assert raw.index("kubectl apply -f each file under `namespaces`") < raw.index("install the releases")


def test_argocd_needs_a_repository():
    with pytest.raises(InputError) as err:
        render(variant("dev", "needs-repo", gitops={"engine": "argocd"}))
    assert err.value.path == "trainstack:gitops.repoURL" and "Git repository" in err.value.message


def test_engine_must_be_known():
    with pytest.raises(InputError) as err:
        variant("dev", "bad-engine", gitops={"engine": "fleet"})
    assert err.value.path == "trainstack:gitops.engine"


def test_pulumi_bundle_is_unchanged_by_the_engine():
    """Phase annotations exist only in the written files; the program registers the bundle as is
    (the sync waves the Volcano module puts on queue users are part of the bundle, engine or not)."""
    staging = bundle_of("staging")
    assert all(PHASE_ANNOTATION not in (r.obj["metadata"].get("annotations") or {}) for r in staging.resources)
    none = render(variant("staging", "staging-none", gitops={"engine": "none"}))
    assert [r.obj for r in none.resources] == [r.obj for r in staging.resources]


@pytest.mark.parametrize("engine", ["flux", "argocd"])
def test_a_long_name_is_written_once_under_its_short_path(engine):
    """An object whose file name is cut to NAME_MAX is written once, annotated, under the short path
    the root kustomization lists (the engine used to write a second, unshortened copy beside it)."""
    name = "c" * 240
    stack = variant("staging", f"long-{engine}", storage={"claims": [{"name": name, "size": "1Ti"}]},
                    gitops={"engine": engine, "repoURL": "https://git.example.com/x.git"},
                    workloads={"trainJobs": []})   # staging's canary mounts checkpoints, replaced here
    files = bundle_files(render(stack), stack.file)
    claims = [p for p in files if p.startswith("storage/persistentvolumeclaim.")]
    assert len(claims) == 1 and len(claims[0].rsplit("/", 1)[1].encode()) <= 255, claims
    obj = yaml.safe_load(files[claims[0]])
    assert obj["metadata"]["name"] == name
    assert {PHASE_ANNOTATION, WAVE_ANNOTATION} & set(obj["metadata"]["annotations"])
    assert claims[0] in yaml.safe_load(files["kustomization.yaml"])["resources"]


def test_controller_owned_fields_get_each_engines_mechanism():
    """The HPA-scaled PyTorchJob of the legacy stack: Argo CD ignores its Worker replicas and respects
    that when syncing; Flux never re-applies the job; a stack without such a field gets neither."""
    _, files = argocd_legacy()
    app = files["argocd/application.objects.yaml"]
    assert app["spec"]["ignoreDifferences"] == [{
        "group": "kubeflow.org", "kind": "PyTorchJob", "name": "llama-elastic", "namespace": "training",
        "jsonPointers": ["/spec/pytorchReplicaSpecs/Worker/replicas"]}]
    assert "RespectIgnoreDifferences=true" in app["spec"]["syncPolicy"]["syncOptions"]
    flux_job = files_of("legacy")["workloads/pytorchjob.training.llama-elastic.yaml"]
    assert flux_job["metadata"]["annotations"]["kustomize.toolkit.fluxcd.io/ssa"] == "IfNotPresent"
    assert all("kustomize.toolkit.fluxcd.io/ssa" not in (doc.get("metadata", {}).get("annotations") or {})
               for path, doc in files_of("legacy").items() if isinstance(doc, dict) and path !=
               "workloads/pytorchjob.training.llama-elastic.yaml")
    staging = files_of("staging")["argocd/application.objects.yaml"]
    assert "ignoreDifferences" not in staging["spec"]
    assert "RespectIgnoreDifferences=true" not in staging["spec"]["syncPolicy"]["syncOptions"]
