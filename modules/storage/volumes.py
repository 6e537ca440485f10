"""The `volumes` option (schema: volumes.yaml beside this file): the stack's claims mounted by name.

One resolver for every kind that runs pods (runtimes, Volcano Jobs, TrainJobs, PyTorchJobs,
Deployments, the probe): it checks each entry against trainstack:storage.claims and returns the pod
volumes and the container mounts, which each kind places where it carries them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from modules.core.vocabulary.names import is_dns1123_label

if TYPE_CHECKING:
    from modules.core.context import RenderContext

SHM_PATH = "/dev/shm"
RESERVED_VOLUMES = ("dshm", "probe")   # the volumes trainstack's pods already carry


@dataclass(frozen=True)
class Mounts:
    """What a pod needs for its claims: ``volumes`` for the pod spec, ``mounts`` for the container."""

    volumes: tuple[dict, ...] = ()
    mounts: tuple[dict, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.volumes)

    def claim_refs(self, namespace: str) -> tuple[str, ...]:
        """The bundle keys of the claims these volumes mount in ``namespace``: what the pods'
        object depends on."""
        return tuple(f"PersistentVolumeClaim/{namespace}/{v['persistentVolumeClaim']['claimName']}"
                     for v in self.volumes)


def stack_claims(ctx: "RenderContext") -> dict[str, set[str]]:
    """Claim name -> the namespaces trainstack:storage renders it in."""
    default = ctx.stack.values["trainingNamespaces"][0]
    out: dict[str, set[str]] = {}
    for claim in ctx.section("storage")["claims"]:
        out.setdefault(claim["name"], set()).add(claim.get("namespace") or default)
    return out


def volume_name(claim: str, taken: set[str]) -> str:
    """The pod volume of a claim: its own name where that is a valid volume name (a DNS-1123 label),
    else ``claim-<n>``."""
    if is_dns1123_label(claim) and claim not in RESERVED_VOLUMES and claim not in taken:
        return claim
    n = 0
    while f"claim-{n}" in taken:
        n += 1
    return f"claim-{n}"


def resolve(ctx: "RenderContext", path: str, entries: list[dict], namespace: str | None,
            base: Mounts | None = None, base_what: str = "") -> Mounts:
    """Check ``entries`` (the option's value at ``path``) and build the pod's volumes and mounts.
    ``namespace``: where the pods run; None for a cluster-scoped runtime, whose claims must exist in
    at least one training namespace (the claims-serve-pods rule judges each TrainJob's). ``base``:
    what the pod already mounts (a TrainJob's runtime, ``base_what``): its paths and claims stay its own."""
    claims = stack_claims(ctx)
    names: dict[str, str] = {}
    read_only: dict[str, bool] = {}
    mounts: list[dict] = []
    paths: dict[str, int] = {}
    base = base or Mounts()
    base_paths = {m["mountPath"] for m in base.mounts}
    base_claims = {v["persistentVolumeClaim"]["claimName"] for v in base.volumes}
    taken = {v["name"] for v in base.volumes}
    for i, entry in enumerate(entries):
        where, claim = f"{path}[{i}]", entry["claim"]
        homes = claims.get(claim)
        if not homes:
            raise ctx.expected(f"{where}.claim", "the name of a claim of trainstack:storage.claims ("
                               + (", ".join(sorted(claims)) or "none declared") + ")", claim)
        if namespace is not None and namespace not in homes:
            raise ctx.error(f"{where}.claim", f"claim {claim!r} exists only in namespace(s) "
                            f"{', '.join(sorted(homes))}, not in {namespace!r} where the pods run; a pod mounts "
                            "claims of its own namespace only (set storage.claims[].namespace)")
        mount_path = entry["mountPath"].rstrip("/") or "/"
        if mount_path == SHM_PATH:
            raise ctx.error(f"{where}.mountPath", f"{SHM_PATH} is the pods' memory-backed shared memory; "
                            "mount the claim elsewhere")
        if claim in base_claims:
            raise ctx.error(f"{where}.claim", f"{base_what} already mounts claim {claim!r}; mount it there "
                            "or here, not both")
        if mount_path in base_paths:
            raise ctx.error(f"{where}.mountPath", f"{base_what} already mounts a claim at {mount_path}")
        if mount_path in paths:
            raise ctx.error(f"{where}.mountPath", f"{mount_path} is already mounted by {path}[{paths[mount_path]}] "
                            "(the API server refuses two mounts at one path)")
        paths[mount_path] = i
        if claim not in names:
            names[claim] = volume_name(claim, taken | set(names.values()))
        read_only[claim] = read_only.get(claim, True) and entry["readOnly"]
        mount: dict = {"name": names[claim], "mountPath": mount_path}
        if entry["readOnly"]:
            mount["readOnly"] = True
        if entry["subPath"]:
            mount["subPath"] = entry["subPath"]
        mounts.append(mount)
    volumes = []
    for claim, name in names.items():
        source: dict = {"claimName": claim}
        if read_only[claim]:   # every mount reads only: the volume is attached read-only too
            source["readOnly"] = True
        volumes.append({"name": name, "persistentVolumeClaim": source})
    return Mounts(tuple(volumes), tuple(mounts))
