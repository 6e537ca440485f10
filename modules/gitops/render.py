"""GitOps engines: the Argo CD or Flux objects that apply ``deploy/<stack>/`` in the right order.

Nothing here is registered by Pulumi (``pulumi up`` orders the bundle itself): ``render`` only checks
the options, and ``output_files`` turns the files ``trainstack render`` writes for engine ``none``
into the chosen engine's layout. The order is the same for both engines:

1. chart releases (with their namespaces created by the engine), in dependency order; overlays
   (Training Operator v1) after what they depend on;
2. ``cluster``: namespaces, CRD-bound settings, HyperNodes, NCCL ConfigMaps, claims, rules, HPAs;
3. ``queues``: Volcano Queues, healthy only once Volcano reports ``status.state: Open``;
4. ``workloads``: everything that needs a Queue (jobs, PodGroups, gang Deployments, probe CronJobs).
"""
from __future__ import annotations

from modules.core import yamlio
from modules.core.bundle import OWNED_ANNOTATION, Bundle, ChartRelease, Overlay
from modules.core.context import MANAGED_BY, RenderContext
from modules.semantics.owned import ARGOCD_RESPECT, FLUX_SSA, owned_fields_of
from modules.volcano.render import QUEUE_WAVE, SYNC_WAVE_ANNOTATION as WAVE_ANNOTATION  # Argo CD order
from modules.core.vocabulary.go import atoi

MODULE = "gitops"
PHASES = ("cluster", "queues", "workloads")
PHASE_ANNOTATION = "trainstack.io/phase"          # Flux: selects a phase's objects
QUEUE_API = ("scheduling.volcano.sh", "Queue")

# Argo CD health checks (Lua, argocd-cm). Applications: restores the app-of-apps health that
# Argo CD 1.8 removed, so a parent waits for each wave of child Applications to be Healthy.
# Queues: Volcano sets status.state; jobs in a queue that is not Open are rejected.
APPLICATION_HEALTH_LUA = """\
local hs = {status = "Progressing", message = ""}
if obj.status ~= nil and obj.status.health ~= nil then
  hs.status = obj.status.health.status
  if obj.status.health.message ~= nil then
    hs.message = obj.status.health.message
  end
end
return hs
"""
QUEUE_HEALTH_LUA = """\
local hs = {status = "Progressing", message = "waiting for Volcano to open the queue"}
if obj.status ~= nil and obj.status.state ~= nil then
  if obj.status.state == "Open" then
    hs.status = "Healthy"
    hs.message = "queue is Open"
  elseif obj.status.state == "Closed" or obj.status.state == "Closing" then
    hs.status = "Degraded"
    hs.message = "queue is " .. obj.status.state
  end
end
return hs
"""
# Flux: the same readiness for Queues as CEL (kustomize-controller healthCheckExprs).
QUEUE_HEALTH_CEL = {"current": "has(status.state) && status.state == 'Open'",
                    "failed": "has(status.state) && (status.state == 'Closed' || status.state == 'Closing')"}


def render(ctx: RenderContext) -> list:
    cfg = ctx.section(MODULE)
    if cfg["engine"] == "argocd" and not cfg["repoURL"]:
        raise ctx.error("gitops.repoURL", "engine argocd needs the Git repository that holds deploy/ "
                        "(the Applications for the plain objects and overlays point there)")
    return []


# --- which phase an object belongs to ----------------------------------------------------------

def phases(bundle: Bundle) -> dict[str, str]:
    """Resource key -> phase, read from the sync waves the Volcano module puts on the Bundle (its
    ``after_queues`` is the one place that decides what waits for a Queue): Queues, then every
    object in a later wave than theirs, then the rest (cluster objects) before both."""
    out: dict[str, str] = {}
    queue_wave = int(QUEUE_WAVE)
    for resource in bundle.resources:
        group = resource.api_version.rpartition("/")[0]
        if (group, resource.kind) == QUEUE_API:
            out[resource.key] = "queues"
        else:
            out[resource.key] = "workloads" if _wave(resource) > queue_wave else "cluster"
    return out


def _wave(resource) -> int:
    value = (resource.obj["metadata"].get("annotations") or {}).get(WAVE_ANNOTATION)
    if value is None:   # most objects: wave 0
        return 0
    return atoi(str(value)) or 0   # Argo CD reads the wave with Go's Atoi (not isdigit: `²`, `٣`)


def release_waves(bundle: Bundle) -> dict[str, int]:
    """Chart release / overlay key -> wave: 0 without release dependencies, else one after its last."""
    waves: dict[str, int] = {}
    for item in bundle.items:
        if isinstance(item, (ChartRelease, Overlay)):
            before = [waves[d] for d in bundle.dependencies.get(item.key, ()) if d in waves]
            waves[item.key] = 1 + max(before) if before else 0
    return waves


def without_delivery_notes(obj: dict) -> dict:
    """The object as the Bundle has it: less the phase and wave annotations an engine adds when
    writing deploy/<stack>/ (so a written object can be recognised as the rendered one)."""
    notes = (obj.get("metadata") or {}).get("annotations")
    if not isinstance(notes, dict) or not ({PHASE_ANNOTATION, WAVE_ANNOTATION} & notes.keys()):
        return obj
    kept = {k: v for k, v in notes.items() if k not in (PHASE_ANNOTATION, WAVE_ANNOTATION)}
    meta = {k: v for k, v in obj["metadata"].items() if k != "annotations"}
    return {**obj, "metadata": {**meta, **({"annotations": kept} if kept else {})}}


# --- output -------------------------------------------------------------------------------------

def _engine(bundle: Bundle) -> tuple[dict, str]:
    cfg = getattr(bundle, "gitops", None) or {}
    return cfg, cfg.get("engine", "none")


def output_objects(bundle: Bundle, objects: dict[str, dict]) -> dict[str, dict]:
    """The objects as the engine delivers them, each annotated once: Argo CD its sync wave (the
    Bundle's own; workloads may sit several waves after their Queue), Flux its phase."""
    _, engine = _engine(bundle)
    if engine == "none":
        return objects
    phase_of = phases(bundle)
    out = {}
    for resource in bundle.resources:
        key = resource.key
        phase = phase_of[key]
        obj = objects[key]
        meta = obj["metadata"]
        notes = meta.get("annotations") or {}
        if engine == "argocd":
            note = {WAVE_ANNOTATION: str(max(_wave(resource), PHASES.index(phase)))}
        else:
            note = {PHASE_ANNOTATION: phase}
            # Flux has no per-field ignore: create the object, never re-apply it over its controller.
            # (Only an object that records a kept field has one: most are passed by one lookup.)
            if OWNED_ANNOTATION in notes and owned_fields_of(obj):
                note[FLUX_SSA] = "IfNotPresent"
        out[key] = {**obj, "metadata": {**meta, "annotations": {**notes, **note}}}
    return out


def output_replaced(bundle: Bundle) -> tuple[str, ...]:
    """The paths (a folder ends in ``/``) of core's files that ``output_files`` drops or lays out
    its own way for this engine: core need not serialize them."""
    _, engine = _engine(bundle)
    return () if engine == "none" else ("charts/", "kustomization.yaml")


def output_files(bundle: Bundle, files: dict[str, bytes], head: str) -> dict[str, bytes]:
    """The engine's files: for ``none`` unchanged; otherwise no ``charts/`` (the engine installs the
    charts), no overlay in the root kustomization (each overlay is applied on its own after the
    chart it needs), and ``argocd/`` or ``flux/``. The objects were annotated by ``output_objects``."""
    cfg, engine = _engine(bundle)
    if engine == "none":
        return files
    out = {path: data for path, data in files.items() if not path.startswith("charts/")}
    paths = [path for path in out if not path.startswith("overlays/") and path != "kustomization.yaml"]
    out["kustomization.yaml"] = (head + yamlio.dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": paths})).encode()
    folder = cfg.get("path") or f"deploy/{bundle.stack}"
    extra = (argocd_files if engine == "argocd" else flux_files)(bundle, cfg, folder, phases(bundle))
    for path, documents in extra.items():
        out[path] = (head + "".join(("---\n" if i else "") + yamlio.dump(d) for i, d in enumerate(documents))).encode()
    return out


def _labels(bundle: Bundle) -> dict:
    return {**MANAGED_BY, "app.kubernetes.io/component": MODULE, "trainstack.io/stack": bundle.stack}


def _kustomization(paths: list[str]) -> dict:
    return {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": paths}


def _release_namespaces(bundle: Bundle) -> dict[str, dict]:
    """Namespace name -> its rendered object (for the metadata an engine gives namespaces it creates)."""
    return {r.name: r.obj for r in bundle.resources if r.kind == "Namespace"}


# --- Argo CD ------------------------------------------------------------------------------------

def _oci_parts(release: ChartRelease) -> str:
    """Argo CD's Helm-OCI repoURL: the registry path without the scheme."""
    return release.repository[len("oci://"):].rstrip("/")


def argocd_files(bundle: Bundle, cfg: dict, folder: str, phase_of: dict[str, str]) -> dict[str, list[dict]]:
    argo = cfg["argocd"]
    ns = argo["namespace"]
    waves = release_waves(bundle)
    last = max(waves.values(), default=-1)
    namespaces = _release_namespaces(bundle)
    sync_policy_base = {"automated": {"prune": True, "selfHeal": True}} if argo["automated"] else {}
    retry = {"limit": 5, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "5m"}}

    def application(name: str, wave: int, source: dict, namespace: str | None, options: list[str],
                    managed_ns: dict | None = None) -> dict:
        destination = {"server": argo["server"]}
        if namespace:
            destination["namespace"] = namespace
        policy = {**sync_policy_base, **({"syncOptions": options} if options else {}), "retry": retry}
        if managed_ns:
            policy["managedNamespaceMetadata"] = managed_ns
        return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                "metadata": {"name": f"{bundle.stack}-{name}", "namespace": ns, "labels": _labels(bundle),
                             "annotations": {WAVE_ANNOTATION: str(wave)}},
                "spec": {"project": argo["project"], "source": source, "destination": destination,
                         "syncPolicy": policy}}

    files: dict[str, list[dict]] = {}
    children: list[str] = []
    for item in bundle.items:
        if isinstance(item, ChartRelease):
            oci = item.repository.startswith("oci://")
            source = {"repoURL": _oci_parts(item) if oci else item.repository, "chart": item.chart,
                      "targetRevision": item.version,
                      "helm": {"releaseName": item.name, "valuesObject": item.values}}
            # The engine creates the release's namespace before installing (the kustomization's
            # Namespace objects come later); it gets the same labels and keep-annotations.
            rendered_ns = namespaces.get(item.namespace, {}).get("metadata", {})
            managed = {k: dict(rendered_ns[k]) for k in ("labels", "annotations") if rendered_ns.get(k)}
            options = ["CreateNamespace=true"] + (["ServerSideApply=true"] if item.serves else [])
            path = f"argocd/application.{item.name}.yaml"
            files[path] = [application(item.name, waves[item.key], source, item.namespace, options, managed or None)]
            children.append(path.removeprefix("argocd/"))
            if oci:   # Argo CD reads Helm charts from OCI registries declared as repositories
                files[f"argocd/secret.repo-{item.name}.yaml"] = [{
                    "apiVersion": "v1", "kind": "Secret",
                    "metadata": {"name": f"{bundle.stack}-repo-{item.name}", "namespace": ns,
                                 "labels": {**_labels(bundle), "argocd.argoproj.io/secret-type": "repository"}},
                    "type": "Opaque",
                    "stringData": {"name": f"{bundle.stack}-{item.name}", "type": "helm",
                                   "url": _oci_parts(item), "enableOCI": "true"}}]
                children.append(f"secret.repo-{item.name}.yaml")
        elif isinstance(item, Overlay):
            source = {"repoURL": cfg["repoURL"], "targetRevision": cfg["targetRevision"],
                      "path": f"{folder}/overlays/{item.name}"}
            # The overlay brings its own namespace; its CRDs are too large for client-side apply.
            path = f"argocd/application.{item.name}.yaml"
            files[path] = [application(item.name, waves[item.key], source, item.namespace, ["ServerSideApply=true"])]
            children.append(path.removeprefix("argocd/"))
    source = {"repoURL": cfg["repoURL"], "targetRevision": cfg["targetRevision"], "path": folder}
    ignored = ignore_differences(bundle)
    objects_app = application("objects", last + 1, source, None,
                              ["ServerSideApply=true"] + ([ARGOCD_RESPECT] if ignored else []))
    if ignored:   # fields a controller owns: not a diff, and left at their live value when syncing
        objects_app["spec"]["ignoreDifferences"] = ignored
    files["argocd/application.objects.yaml"] = [objects_app]
    children.append("application.objects.yaml")
    files["argocd/kustomization.yaml"] = [_kustomization(sorted(children))]
    root_source = {"repoURL": cfg["repoURL"], "targetRevision": cfg["targetRevision"], "path": f"{folder}/argocd"}
    root = application("root", 0, root_source, ns, [])
    root["metadata"]["name"] = bundle.stack
    del root["metadata"]["annotations"]
    files["argocd/root.yaml"] = [root]
    files["argocd/argocd-cm.patch.yaml"] = [{
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": ns,
                     "labels": {"app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd"}},
        "data": {"resource.customizations.health.argoproj.io_Application": APPLICATION_HEALTH_LUA,
                 "resource.customizations.health.scheduling.volcano.sh_Queue": QUEUE_HEALTH_LUA}}]
    return files


def ignore_differences(bundle: Bundle) -> list[dict]:
    """Argo CD ignoreDifferences for every field a rendered object leaves to a controller."""
    out = []
    for resource in bundle.resources:
        fields = owned_fields_of(resource.obj)
        if fields:
            entry = {"group": fields[0].group, "kind": resource.kind, "name": resource.name}
            if resource.namespace:
                entry["namespace"] = resource.namespace
            entry["jsonPointers"] = [f.pointer for f in fields]
            out.append(entry)
    return out


# --- Flux ---------------------------------------------------------------------------------------

def flux_chart_files(bundle: Bundle, interval: str, meta) -> dict[str, list[dict]]:
    """Per chart release a HelmRepository or OCIRepository and a HelmRelease (``dependsOn`` the
    releases it needs), plus the kustomization that lists them."""
    files: dict[str, list[dict]] = {}
    chart_files: list[str] = []
    release_keys = {r.key: r for r in bundle.releases}
    for release in bundle.releases:
        if release.repository.startswith("oci://"):
            source = {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository",
                      "metadata": meta(release.name),
                      "spec": {"interval": interval, "url": f"{release.repository.rstrip('/')}/{release.chart}",
                               "ref": {"tag": release.version},
                               "layerSelector": {"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                                                 "operation": "copy"}}}
            chart = {"chartRef": {"kind": "OCIRepository", "name": f"{bundle.stack}-{release.name}"}}
            source_file = f"ocirepository.{release.name}.yaml"
        else:
            source = {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository",
                      "metadata": meta(release.name),
                      "spec": {"interval": interval, "url": release.repository}}
            chart = {"chart": {"spec": {"chart": release.chart, "version": release.version,
                                        "sourceRef": {"kind": "HelmRepository",
                                                      "name": f"{bundle.stack}-{release.name}"}}}}
            source_file = f"helmrepository.{release.name}.yaml"
        depends = [{"name": f"{bundle.stack}-{release_keys[d].name}"}
                   for d in bundle.dependencies.get(release.key, ()) if d in release_keys]
        spec = {"interval": interval, "releaseName": release.name, "targetNamespace": release.namespace,
                "storageNamespace": release.namespace, **chart,
                # The engine creates the namespace (the kustomization's Namespace objects come later);
                # CRDs in the chart are created and upgraded with it.
                "install": {"createNamespace": True, "crds": "CreateReplace", "remediation": {"retries": 3}},
                "upgrade": {"crds": "CreateReplace", "remediation": {"retries": 3}},
                "values": release.values}
        if depends:
            spec["dependsOn"] = depends
        files[f"flux/charts/{source_file}"] = [source]
        files[f"flux/charts/helmrelease.{release.name}.yaml"] = [{
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": meta(release.name),
            "spec": spec}]
        chart_files += [source_file, f"helmrelease.{release.name}.yaml"]
    files["flux/charts/kustomization.yaml"] = [_kustomization(chart_files)]
    return files


def flux_files(bundle: Bundle, cfg: dict, folder: str, phase_of: dict[str, str]) -> dict[str, list[dict]]:
    flux = cfg["flux"]
    ns = flux["namespace"]
    interval = flux["interval"]
    source_ref = {"kind": "GitRepository", "name": flux["sourceRef"]["name"]}
    if flux["sourceRef"]["namespace"]:
        source_ref["namespace"] = flux["sourceRef"]["namespace"]

    def meta(name: str) -> dict:
        return {"name": f"{bundle.stack}-{name}", "namespace": ns, "labels": _labels(bundle)}

    files = flux_chart_files(bundle, interval, meta)

    def kustomization(name: str, path: str, depends: list[str], extra: dict | None = None) -> dict:
        spec = {"interval": interval, "sourceRef": source_ref, "path": f"./{path}", "prune": True,
                "wait": True, "timeout": "15m"}
        if depends:
            spec["dependsOn"] = [{"name": f"{bundle.stack}-{d}"} for d in depends]
        spec.update(extra or {})
        return {"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization", "metadata": meta(name),
                "spec": spec}

    kustomizations: dict[str, dict] = {"charts": kustomization("charts", f"{folder}/flux/charts", [])}
    for overlay in bundle.overlays:
        kustomizations[overlay.name] = kustomization(overlay.name, f"{folder}/overlays/{overlay.name}", ["charts"])
    before = ["charts"] + [o.name for o in bundle.overlays]
    present = set(phase_of.values())
    for phase in PHASES:
        if phase not in present:
            continue
        # Every phase builds the whole kustomization and keeps only its own objects.
        drop = {"target": {"annotationSelector": f"{PHASE_ANNOTATION}!={phase}"},
                "patch": yamlio.dump({"$patch": "delete", "apiVersion": "v1", "kind": "Object",
                                      "metadata": {"name": "not-in-this-phase"}})}
        extra: dict = {"patches": [drop]}
        if phase == "queues":
            extra["healthCheckExprs"] = [{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                                          **QUEUE_HEALTH_CEL}]
        kustomizations[phase] = kustomization(phase, folder, before, extra)
        before = [phase]
    for name, obj in kustomizations.items():
        files[f"flux/kustomization.{name}.yaml"] = [obj]
    files["flux/kustomization.yaml"] = [_kustomization([f"kustomization.{n}.yaml" for n in kustomizations])]
    root = kustomization("root", f"{folder}/flux", [])
    root["metadata"]["name"] = bundle.stack
    root["spec"]["wait"] = False   # its children wait for themselves, in order
    files["flux/root.yaml"] = [root]
    return files
