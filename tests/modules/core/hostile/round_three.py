"""Round three of the hostile corpus: the what-if, cyclic aliases, credential shapes,
numbers Go would refuse, terminal escapes. Same case format as corpus.py."""
from __future__ import annotations

import base64

from .corpus import SECRET, pod_env, stack, workload


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _job_args(arg: str) -> str:
    """A stack whose one Volcano job passes ``arg`` (rendered verbatim into deploy/)."""
    quoted = arg.replace("'", "''")
    return stack(f"trainstack:workloads: {{volcanoJobs: [{{name: j, image: 'i:1', replicas: 1, command: [sh, -c], "
                 f"args: ['{quoted}']}}]}}")


# Credential shapes the second round missed, each rendered into deploy/ unless refused.
SHAPES = {
    "mysql-p": f"mysql -u root -p{SECRET} db",
    "docker-login-p": f"docker login -u me -p {SECRET} r.example.com",
    "json-in-a-string": '{"password": "' + SECRET + '"}',
    "presigned-amz": f"curl https://b.s3.amazonaws.com/k?X-Amz-Signature={SECRET}0123456789",
    "presigned-goog": f"curl https://storage.googleapis.com/b/o?X-Goog-Signature={SECRET}0123456789",
    "sshpass": f"sshpass -p {SECRET} ssh host",
    "redis-cli-a": f"redis-cli -h r -a {SECRET} ping",
    "kubeconfig-client-key-data": "client-key-data: " + _b64(f"-----BEGIN RSA PRIVATE KEY-----\n{SECRET}\n"),
    "dockerconfigjson-auth": '{"auths": {"r.example.com": {"auth": "' + _b64(f"u:{SECRET}") + '"}}}',
    "npm-auth": "_auth=" + _b64(f"u:{SECRET}"),
    "x-api-key-header": f"curl -H X-API-Key: {SECRET}",
    "private-token-header": f"curl -H PRIVATE-TOKEN: {SECRET}",
    "htpasswd-line": "admin:$apr1$abcdefgh$" + "b" * 22,
    "putty-key": "PuTTY-User-Key-File-3: ssh-ed25519",
    "url-encoded": f"curl https://x.example.com/?q=password%3D{SECRET}",
    "base64-pem": _b64(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n"),
    "git-host-without-dot": f"git clone alice:{SECRET}@gitserver/x.git",
    **{f"var-{name.lower()}": f"export {name}={SECRET}" for name in (
        "DB_PASS", "SIGNING_KEY", "ENCRYPTION_KEY", "SESSION_KEY", "MASTER_KEY", "REDIS_AUTH", "AUTH_HEADER")},
}

CONFIGMAP = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: training\n  annotations:\n"
             "    {annotations}\ndata:\n  {key}: |\n{data}")


def _configmap(annotations: str = "note: plain", key: str = "app.yaml", data: str = "    a: b\n") -> str:
    return CONFIGMAP.format(annotations=annotations, key=key, data=data)


FILE_FABRIC = "  trainstack:fabric: {source: file, path: f.yaml}\n"
ESCAPE = "a\\e]0;pwned\\a\\e[2J"   # YAML double-quoted escapes: ESC ] 0 ; title BEL ESC [ 2 J

CASES: list[tuple[str, dict, list[str]]] = [
    *[(f"shape-{name}", {"stacks/Pulumi.t.yaml": _job_args(text)}, ["render", "t"]) for name, text in SHAPES.items()],
    ("whatif-1e18-replicas", {"stacks/Pulumi.t.yaml": stack(), "w.yaml": workload(10**18)},
     ["simulate", "t", "--submit", "w.yaml"]),
    ("fabric-cyclic-alias", {"stacks/Pulumi.t.yaml": stack(fabric=FILE_FABRIC),
                             "stacks/f.yaml": "a: &a [1, *a]\nswitches:\n  leaf: {nodes: 'a-[1-2]'}\n"},
     ["render", "t"]),
    ("workloads-cyclic-alias", {"stacks/Pulumi.t.yaml": stack(), "w.yaml": "a: &a {b: *a}\n"},
     ["simulate", "t", "--workloads", "w.yaml"]),
    ("snapshot-cyclic-alias", {"stacks/Pulumi.t.yaml": stack(), "s.yaml": "items: &a [*a]\n"},
     ["drift", "t", "--snapshot", "s.yaml"]),
    ("configmap-annotation-token", {"stacks/Pulumi.t.yaml": stack(), "m.yaml": _configmap(
        "note: ghp_" + "Zq9" * 12 + SECRET.replace("-", ""))}, ["check", "t", "--manifests", "m.yaml"]),
    ("configmap-annotation-pem", {"stacks/Pulumi.t.yaml": stack(), "m.yaml": _configmap(
        "key: '-----BEGIN RSA PRIVATE KEY-----'")}, ["check", "t", "--manifests", "m.yaml"]),
    ("configmap-nested-password", {"stacks/Pulumi.t.yaml": stack(), "m.yaml": _configmap(
        data=f"    db:\n      password: {SECRET}\n")}, ["check", "t", "--manifests", "m.yaml"]),
    ("configmap-kubeconfig-token", {"stacks/Pulumi.t.yaml": stack(), "m.yaml": _configmap(
        key="config", data=f"    users:\n    - name: u\n      user:\n        token: {SECRET}\n")},
     ["check", "t", "--manifests", "m.yaml"]),
    ("env-db-pass", {"stacks/Pulumi.t.yaml": stack(), "m.yaml": pod_env("DB_PASS", SECRET)},
     ["check", "t", "--manifests", "m.yaml"]),
    ("escape-in-check", {"stacks/Pulumi.t.yaml": stack(), "m.yaml": (
        f'apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: "{ESCAPE}", namespace: training}}\n'
        f"data: {{password: {SECRET}}}\n")}, ["check", "t", "--manifests", "m.yaml"]),
    ("escape-in-simulate", {"stacks/Pulumi.t.yaml": stack(), "w.yaml": workload(1).replace(
        "name: big", f'name: "{ESCAPE}"')}, ["simulate", "t", "--submit", "w.yaml"]),
    ("escape-in-drift", {"stacks/Pulumi.t.yaml": stack(), "s.yaml": (
        f'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {{name: "{ESCAPE}"}}\n')},
     ["drift", "t", "--snapshot", "s.yaml"]),
]

def _manifest(kind: str, api: str, spec: str) -> str:
    return f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: x, namespace: training}}\nspec: {spec}\n"


POD = "{containers: [{name: c, image: 'i:1'}]}"
# Text that reaches an integer: `str.isdigit` accepts superscripts and other scripts' digits, which
# Go's Atoi refuses (and Python's int() refuses `²`): each an input error or a finding, never exit 4.
NUMBERS = {
    "cron-step-superscript": _manifest("CronJob", "batch/v1", "{schedule: '*/\u00b2 * * * *', jobTemplate: "
                                       f"{{spec: {{template: {{spec: {POD}}}}}}}}}"),
    "cron-value-arabic-indic": _manifest("CronJob", "batch/v1", "{schedule: '\u0663 * * * *', jobTemplate: "
                                         f"{{spec: {{template: {{spec: {POD}}}}}}}}}"),
    "max-surge-superscript": _manifest("Deployment", "apps/v1", "{selector: {matchLabels: {a: b}}, strategy: "
                                       "{rollingUpdate: {maxSurge: '\u00b2%'}}, template: {metadata: {labels: "
                                       f"{{a: b}}}}, spec: {POD}}}}}"),
    "nccl-buffsize-superscript": _manifest("Pod", "v1", "{containers: [{name: c, image: 'i:1', env: [{name: "
                                           "NCCL_BUFFSIZE, value: '\u00b2'}]}]}"),
    "sync-wave-superscript": ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: training, "
                              "annotations: {argocd.argoproj.io/sync-wave: '\u00b2'}}\n"),
}
CASES += [(f"number-{name}", {"stacks/Pulumi.t.yaml": stack(), "m.yaml": text},
           ["check", "t", "--manifests", "m.yaml"]) for name, text in NUMBERS.items()]
CASES += [("number-probe-bytes-superscript", {"stacks/Pulumi.t.yaml": stack(), "p.prom":
           'trainstack_probe_time_seconds{collective="all_reduce",bytes="\u00b2"} 0.01\n'},
           ["recommend", "t", "--probe", "p.prom"])]

# Cases whose verdict is a finding (exit 1) rather than an input error.
FINDINGS = ("configmap-annotation-token", "configmap-annotation-pem", "configmap-nested-password",
            "configmap-kubeconfig-token", "env-db-pass", "escape-in-check")
# Cases that may succeed or report (the escapes are shown, escaped).
ANY_VERDICT = ("escape-in-simulate", "escape-in-drift", *(f"number-{name}" for name in NUMBERS))
