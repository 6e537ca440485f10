"""Launch the fabric probe's Volcano Jobs one tier at a time (what the probe CronJob runs).

Standard library only, so a small Python image runs it. For each Job template (JSON) it creates the
Job through the API server with the pod's service-account token, waits until the Job finishes or
the timeout passes (then deletes it), and goes on with the next tier. Tiers run one after another
because two probes at once would share links and disturb each other's measurement.

Each template carries the token ``__RUN_ID__`` where the run's identity goes (pod labels that the
probe's affinity rules select on), so the pods of earlier runs never count.
"""
from __future__ import annotations

import argparse
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request

SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
JOBS_PATH = "/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs"
FINISHED = {"Completed": True, "Failed": False, "Aborted": False, "Terminated": False}
RUN_ID_PLACEHOLDER = "__RUN_ID__"


class Api:
    def __init__(self, base: str, token: str | None, ca_file: str | None):
        self.base = base.rstrip("/")
        self.token = token
        self.context = ssl.create_default_context(cafile=ca_file) if base.startswith("https") else None

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(request, timeout=30, context=self.context) as response:
            return json.loads(response.read() or b"{}")


def run_id(template_name: str, now: float) -> str:
    """A label value unique to this run, e.g. ``probe-leaf-20260101t030000``."""
    stamp = time.strftime("%Y%m%dt%H%M%S", time.gmtime(now))
    return f"{template_name}-{stamp}"[-63:].lstrip("-.")


def launch(api: Api, namespace: str, template_text: str, run: str, timeout: float, poll: float,
           log=print) -> bool:
    """Create one Job, wait for it; True when it completed."""
    job = json.loads(template_text.replace(RUN_ID_PLACEHOLDER, run))
    path = JOBS_PATH.format(namespace=namespace)
    created = api.call("POST", path, job)
    name = created["metadata"]["name"]
    log(f"created Job {namespace}/{name} (run {run})")
    deadline = time.monotonic() + timeout
    phase = ""
    while time.monotonic() < deadline:
        try:
            state = api.call("GET", f"{path}/{name}")
        except (OSError, ValueError) as exc:   # HTTPError and URLError are OSErrors
            if isinstance(exc, urllib.error.HTTPError) and exc.code == 404:
                log(f"Job {name} disappeared before it finished")
                return False
            # A blip of the API server must not abandon a running Job: the next tier would then
            # start beside it and both measure shared links. Keep polling until the deadline.
            log(f"reading Job {name} failed ({exc}); retrying")
            time.sleep(poll)
            continue
        phase = ((state.get("status") or {}).get("state") or {}).get("phase", "")
        if phase in FINISHED:
            log(f"Job {name} finished: {phase}")
            return FINISHED[phase]
        time.sleep(poll)
    log(f"Job {name} did not finish within {timeout:.0f}s (last phase {phase or 'unknown'}); deleting it")
    api.call("DELETE", f"{path}/{name}", {"kind": "DeleteOptions", "apiVersion": "v1",
                                          "propagationPolicy": "Background"})
    return False


def default_api() -> str:
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        return ""
    return f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Create the fabric probe Jobs one tier at a time.")
    p.add_argument("templates", nargs="+", help="Volcano Job templates (JSON), run in this order")
    p.add_argument("--namespace", required=True)
    p.add_argument("--timeout", type=float, default=1800, help="seconds to wait for each Job")
    p.add_argument("--poll", type=float, default=10, help="seconds between status checks")
    p.add_argument("--api", default=default_api(), help="API server URL (default: the in-cluster one)")
    p.add_argument("--token-file", default=f"{SA_DIR}/token")
    p.add_argument("--ca-file", default=f"{SA_DIR}/ca.crt")
    args = p.parse_args(argv)
    if not args.api:
        p.error("no API server: not in a cluster and no --api given")
    token = open(args.token_file, encoding="utf-8").read().strip() if os.path.exists(args.token_file) else None
    api = Api(args.api, token, args.ca_file if os.path.exists(args.ca_file) else None)
    ok = True
    for path in args.templates:
        name = os.path.splitext(os.path.basename(path))[0]
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            ok = launch(api, args.namespace, text, run_id(name, time.time()), args.timeout, args.poll) and ok
        except (urllib.error.URLError, OSError, ValueError, KeyError) as exc:
            print(f"error: {name}: {exc}", file=sys.stderr)
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
