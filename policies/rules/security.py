"""Safety rules every platform bundle needs: pinned images, host networking only on purpose, no
secrets in ConfigMaps, no wildcard RBAC."""
from __future__ import annotations

import fnmatch
import re
from typing import Any, Iterator

from modules.core.secrets import ASSIGNMENT, REFERENCE, credential_in, find_credentials, secret_like_key

from ..framework import (MANDATORY, CheckContext, Finding, Rule, annotations, as_dict, as_list, meta,
                         pod_templates, where)
from ..k8s import image_reference, images_of

IMAGE_PINNED = "image-pinned"
HOST_NETWORK = "host-network-opt-in"
NO_SECRETS = "no-secrets-in-configmaps"
RBAC = "rbac-no-wildcards"
HOST_NETWORK_ANNOTATION = "trainstack.io/host-network"


# --- image-pinned -----------------------------------------------------------------------------

def _exempt(image: str, patterns: list) -> bool:
    return any(isinstance(p, str) and (fnmatch.fnmatchcase(image, p) or image.startswith(p.rstrip("*")) and
                                       p.endswith("*")) for p in patterns)


def _tag_values(values: Any, path: str) -> Iterator[tuple[str, str]]:
    """Chart values whose key is an image tag (tag, imageTag, image_tag_version, ...)."""
    if isinstance(values, dict):
        for key, value in values.items():
            sub = f"{path}.{key}"
            if isinstance(value, str) and re.search(r"tag", str(key), re.IGNORECASE) and not \
                    re.search(r"tags$", str(key), re.IGNORECASE):
                yield sub, value
            else:
                yield from _tag_values(value, sub)
    elif isinstance(values, list):
        for i, value in enumerate(values):
            yield from _tag_values(value, f"{path}[{i}]")


def _image_pinned(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    exempt = list(ctx.config.get("exemptImages") or [])
    require_digest = bool(ctx.config.get("requireDigest", False))
    for path, image in images_of(obj, pod_templates(obj)):
        if not image.strip() or _exempt(image, exempt):
            continue
        tag, digest = image_reference(image)
        if digest:
            continue
        if tag is None:
            problem = "has no tag, which means :latest"
        elif tag == "latest":
            problem = "is tagged :latest"
        elif require_digest:
            yield Finding(path, f"{where(obj, path)}: image {image!r} has no digest; this stack requires "
                          "image@sha256:... (requireDigest), because a tag can be pushed again and a registry "
                          "can serve a different image under it. Append the digest the tag resolves to now.")
            continue
        else:
            continue
        yield Finding(path, f"{where(obj, path)}: image {image!r} {problem}; a moving tag runs different code on "
                      "different nodes of one job and after every restart, and nothing records what ran. Pin a "
                      "version tag or a digest (image@sha256:...).")
    if obj.get("kind") == "Release" and str(obj.get("apiVersion", "")).startswith("helm.sh/"):
        for path, value in _tag_values(as_dict(obj.get("spec")).get("values"), "spec.values"):
            if value.strip().lower() in ("latest", "v-latest"):
                yield Finding(path, f"{where(obj, path)}: chart value {value!r} deploys the :latest images of the "
                              "chart; a moving tag changes the scheduler or operator under running jobs. Pin the "
                              "version (or leave it empty so the chart uses its own appVersion).")


# --- host-network-opt-in ----------------------------------------------------------------------

def _host_network_opt_in(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    exempt_namespaces = set(ctx.config.get("exemptNamespaces") or [])
    namespace = str(meta(obj).get("namespace"))
    for template_path, template in pod_templates(obj):
        pod_spec = as_dict(template.get("spec"))
        if pod_spec.get("hostNetwork") is not True:
            continue
        base = f"{template_path}.spec" if template_path else "spec"
        opted = any(str(annotations(o).get(HOST_NETWORK_ANNOTATION, "")).lower() == "true"
                    for o in (obj, template)) or namespace in exempt_namespaces
        if not opted:
            yield Finding(f"{base}.hostNetwork", f"{where(obj, f'{base}.hostNetwork')}: hostNetwork: true without an "
                          "explicit opt-in; host-network pods share the node's ports (two trainer pods on one node "
                          "collide on 29500/23456, kubeflow/trainer#2282) and see every host interface. Prefer "
                          "SR-IOV/Multus for RDMA; if host networking is really needed, annotate the object or its "
                          f"pod template with {HOST_NETWORK_ANNOTATION}: \"true\".")
        if pod_spec.get("dnsPolicy") != "ClusterFirstWithHostNet" and namespace not in exempt_namespaces:
            got = pod_spec.get("dnsPolicy") or "unset (ClusterFirst)"
            yield Finding(f"{base}.dnsPolicy", f"{where(obj, f'{base}.dnsPolicy')}: dnsPolicy is {got} with "
                          "hostNetwork: true, so the pods use the node's resolver and cannot resolve cluster "
                          "Services such as the rendezvous address <job>-node-0-0.<job>. Set dnsPolicy: "
                          "ClusterFirstWithHostNet.")


# --- no-secrets-in-configmaps -----------------------------------------------------------------

# One line at a time: the blanks around ``:`` never cross a line end, so `db:` followed by an
# indented `password: X` reads as two lines and the second is judged (a kubeconfig's `user:` then
# `token: X` too).
_LINE = re.compile(r"(?im)^[ \t\"'-]*([A-Za-z0-9_.-]+)[\"']?[ \t]*[:=][ \t]*(\S.*?)[ \t\r]*$")


# Scripts shipped in ConfigMaps: there `token = read_token()` is code, and only a quoted string
# literal assigned to a secret-like name is a literal secret.
_SOURCE_SUFFIXES = (".py", ".sh", ".bash", ".js", ".ts", ".rb", ".pl", ".lua")
_QUOTED = re.compile(r"""^[rbuf]?(["']).+\1[,;]?$""")
# Empty, null, booleans and numbers are settings (automountServiceAccountToken: false), not secrets.
_NOT_SECRET = re.compile(r"""^["']?(|null|~|true|false|True|False|-?[0-9]+(\.[0-9]+)?)["']?[,;]?$""")


def _secret_in(key: str, value: str) -> str | None:
    what = credential_in(value)   # the RE2 pre-check first: a shipped script is tens of KB
    if what and what != ASSIGNMENT:
        return what   # an assignment is named by the line scan below where it can
    if secret_like_key(key) and value.strip() and not REFERENCE.match(value) and "\n" not in value.strip():
        return f"a literal value for {key!r}"
    source = key.endswith(_SOURCE_SUFFIXES)
    for name, inner in _LINE.findall(value):
        if source and not _QUOTED.match(inner):
            continue
        if secret_like_key(name) and not REFERENCE.match(inner) and not _NOT_SECRET.match(inner):
            return f"a literal {name!r} inside it"
    return what


def _no_secrets(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    allowed = set(ctx.config.get("allowKeys") or [])
    kind = obj.get("kind")
    if kind == "Secret":
        return   # where secrets belong
    # Every other object and chart values by shape and by key; a ConfigMap's metadata (names,
    # labels, annotations) and any other field too, its data below line by line.
    skipped = ("apiVersion", "kind") + (("data", "binaryData") if kind == "ConfigMap" else ())
    for path, what in find_credentials({k: v for k, v in obj.items() if k not in skipped}):
        if path.rsplit(".", 1)[-1] in allowed:
            continue
        yield Finding(path, f"{where(obj, path)}: looks like a secret ({what}); rendered objects and chart "
                      "values end up in GitOps repositories and in the cluster's plain objects. Keep it in a "
                      "Secret and reference it by name; if it is not a secret, list the key in the rule's "
                      "allowKeys.")
    if kind != "ConfigMap":
        return
    for part in ("data", "binaryData"):
        for key, value in as_dict(obj.get(part)).items():
            if key in allowed or not isinstance(value, str):
                continue
            what = _secret_in(str(key), value) if part == "data" else (
                f"binary data under {key!r}" if secret_like_key(str(key)) else None)
            if what:
                path = f"{part}.{key}"
                yield Finding(path, f"{where(obj, path)}: looks like a secret ({what}); ConfigMaps are readable by "
                              "anyone who can read the namespace, are not encrypted at rest and end up in GitOps "
                              "repositories. Move it to a Secret and reference it (secretKeyRef / a mounted Secret); "
                              "if it is not a secret, list the key in the rule's allowKeys.")


# --- rbac-no-wildcards ------------------------------------------------------------------------

def _rbac_no_wildcards(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    if str(meta(obj).get("name")) in set(ctx.config.get("exemptNames") or []):
        return
    kind = obj.get("kind")
    if kind in ("RoleBinding", "ClusterRoleBinding"):
        ref = as_dict(obj.get("roleRef"))
        if ref.get("kind") == "ClusterRole" and ref.get("name") == "cluster-admin":
            yield Finding("roleRef.name", f"{where(obj, 'roleRef.name')}: binds cluster-admin, which grants every verb "
                          "on every resource. Bind a role that lists the resources and verbs the subject needs.")
        return
    if kind == "ClusterRole" and obj.get("aggregationRule"):
        return   # the controller fills its rules from other roles
    for i, rule in enumerate(as_list(obj.get("rules"))):
        rule = as_dict(rule)
        for field_name in ("apiGroups", "resources", "verbs", "nonResourceURLs"):
            values = as_list(rule.get(field_name))
            if any(isinstance(v, str) and (v == "*" or v.endswith("/*")) for v in values):
                path = f"rules[{i}].{field_name}"
                yield Finding(path, f"{where(obj, path)}: {field_name} contains a wildcard ({values}); it also grants "
                              "whatever resources and verbs are added to the cluster later (CRDs of every operator). "
                              f"List the {field_name} explicitly.")


RULES = (
    Rule(
        id=IMAGE_PINNED,
        description="Container images (pod templates of every workload kind, TrainJob trainer.image) and chart "
                    "image tags are pinned: no :latest, no untagged images; with requireDigest, every image carries a "
                    "digest.",
        why="A moving tag runs different code on different nodes of one distributed job and after every restart; "
            "Volcano's own git chart even defaults its images to latest.",
        fix="Use a version tag or a digest (image@sha256:...), and exact chart versions.",
        severity="medium", enforcement=MANDATORY, check=_image_pinned,
        config_schema={"exemptImages": {
            "type": "array", "items": {"type": "string", "minLength": 1}, "default": [],
            "description": "Image patterns (shell-style, e.g. registry.local/dev/*) that may float."},
            "requireDigest": {
            "type": "boolean", "default": False,
            "description": "Also require a digest (image@sha256:...) on every image not exempted; a version tag "
                           "alone is not enough."}},
        config_defaults={"exemptImages": [], "requireDigest": False}),
    Rule(
        id=HOST_NETWORK,
        description=f"Pods use hostNetwork only with an explicit opt-in (annotation {HOST_NETWORK_ANNOTATION}: "
                    "\"true\" on the object or its pod template) and always with dnsPolicy ClusterFirstWithHostNet.",
        why="Kubeflow's operators have fixed rendezvous ports (29500 in v2, 23456 in v1), so two host-network "
            "pods on a node collide; host-network pods with the default DNS policy cannot resolve cluster "
            "Services, so the rendezvous address never resolves.",
        fix=f"Prefer SR-IOV/Multus for RDMA. Where host networking is intended, annotate with "
            f"{HOST_NETWORK_ANNOTATION}: \"true\", set dnsPolicy: ClusterFirstWithHostNet, and run one such pod "
            "per node.",
        severity="medium", enforcement=MANDATORY, check=_host_network_opt_in,
        config_schema={"exemptNamespaces": {
            "type": "array", "items": {"type": "string", "minLength": 1}, "default": ["kube-system"],
            "description": "Namespaces whose pods may use host networking without the annotation (CNI, device "
                           "plugins)."}},
        config_defaults={"exemptNamespaces": ["kube-system"]}),
    Rule(
        id=NO_SECRETS,
        description="No object but a Secret holds a secret (ConfigMaps, their metadata included, every other "
                    "object and chart values): no secret-named keys with literal values, no private keys, cloud "
                    "keys, tokens or credentials in URLs, also inside embedded configuration files, read line by "
                    "line (a nested `password:` counts).",
        why="ConfigMaps are readable by every reader of the namespace, are not encrypted at rest and are "
            "committed to GitOps repositories by `trainstack render`.",
        fix="Keep the value in a Kubernetes Secret and reference it by name (trainstack never decrypts secure "
            "config values).",
        severity="high", enforcement=MANDATORY, check=_no_secrets, kinds=None,
        config_schema={"allowKeys": {
            "type": "array", "items": {"type": "string", "minLength": 1}, "default": [],
            "description": "Keys that look like secrets but are not (ConfigMap data keys, or the last key of a "
                           "path in any other object)."}},
        config_defaults={"allowKeys": []}),
    Rule(
        id=RBAC,
        description="Roles and ClusterRoles name their API groups, resources and verbs (no \"*\"), and no binding "
                    "grants cluster-admin.",
        why="A wildcard grants every resource and verb added later, including the CRDs of every operator in "
            "the cluster; operator installs are where such grants slip in.",
        fix="List the exact apiGroups, resources and verbs; bind a narrower role than cluster-admin.",
        severity="high", enforcement=MANDATORY, check=_rbac_no_wildcards,
        kinds=frozenset({"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}),
        config_schema={"exemptNames": {
            "type": "array", "items": {"type": "string", "minLength": 1}, "default": [],
            "description": "Role or binding names allowed to use wildcards."}},
        config_defaults={"exemptNames": []}),
)
