"""Objects shaped as `kubectl get ... -o yaml|json` prints them: a Node with everything a kubelet
reports (allocatable in the kubelet's units, capacity, conditions, images, nodeInfo), a HyperNode
with what the API server adds, and the envelopes kubectl writes (a `List` with `items`)."""
from __future__ import annotations

import copy

IMAGES = 20        # kubectl shows up to 50 (the kubelet's nodeStatusMaxImages); a GPU node has many


def kubectl_node(name: str, cpu: str = "191910m", memory: str = "1968Gi", gpus: str = "8",
                 labels: dict | None = None, images: int = IMAGES) -> dict:
    alloc = {"cpu": cpu, "ephemeral-storage": "3438424073287", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
             "memory": memory, "nvidia.com/gpu": gpus, "nvidia.com/hostdev": "8", "pods": "110"}
    capacity = dict(alloc, cpu="192", memory="2063591136Ki", **{"ephemeral-storage": "3730882816Ki"})
    conditions = [{"lastHeartbeatTime": "2026-12-02T01:59:00Z", "lastTransitionTime": "2026-10-01T08:01:00Z",
                   "message": f"kubelet has no {kind}", "reason": f"KubeletHasNo{kind}", "status": "False",
                   "type": kind} for kind in ("MemoryPressure", "DiskPressure", "PIDPressure")]
    conditions.append({"lastHeartbeatTime": "2026-12-02T01:59:00Z", "lastTransitionTime": "2026-10-01T08:01:00Z",
                       "message": "kubelet is posting ready status", "reason": "KubeletReady", "status": "True",
                       "type": "Ready"})
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "creationTimestamp": "2026-10-01T08:00:00Z",
            "labels": {"beta.kubernetes.io/arch": "amd64", "kubernetes.io/arch": "amd64",
                       "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                       "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                       **(labels or {})},
            "name": name, "resourceVersion": "918273", "uid": f"uid-{name}"},
        "spec": {"podCIDR": "10.244.3.0/24", "podCIDRs": ["10.244.3.0/24"], "providerID": f"baremetal://{name}"},
        "status": {
            "addresses": [{"address": "10.0.3.17", "type": "InternalIP"}, {"address": name, "type": "Hostname"}],
            "allocatable": alloc, "capacity": capacity, "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": [{"names": [f"nvcr.io/nvidia/img{k}@sha256:{k:064x}", f"nvcr.io/nvidia/img{k}:25.01-py3"],
                        "sizeBytes": 9876543210 + k} for k in range(images)],
            "nodeInfo": {"architecture": "amd64", "bootID": f"boot-{name}", "containerRuntimeVersion":
                         "containerd://1.7.24", "kernelVersion": "6.8.0-51-generic", "kubeProxyVersion": "v1.33.1",
                         "kubeletVersion": "v1.33.1", "machineID": f"machine-{name}", "operatingSystem": "linux",
                         "osImage": "Ubuntu 24.04.1 LTS", "systemUUID": f"uuid-{name}"}}}


def as_applied(hypernode: dict, nodes: int) -> dict:
    """A HyperNode (as render writes it) as the API server returns it."""
    live = copy.deepcopy(hypernode)
    live["metadata"].update({"creationTimestamp": "2026-10-01T09:00:00Z", "generation": 1,
                             "resourceVersion": "4242", "uid": f"uid-{live['metadata']['name']}"})
    live["status"] = {"nodeCount": nodes}
    return live


def kubectl_list(items: list[dict]) -> dict:
    """What `kubectl get A,B -o yaml|json` prints: one List."""
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
