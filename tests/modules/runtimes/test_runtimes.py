"""ClusterTrainingRuntimes: the contract every runtime of every shipped stack keeps."""
import pytest

from modules.core.errors import InputError
from modules.core.quantity import parse_quantity
from modules.core.render import render
from modules.volcano import topology

from tests.support.stacks import STACKS, of_kind, shipped_bundle, variant


def runtimes_of(name):
    return of_kind(shipped_bundle(name), "ClusterTrainingRuntime")


def pod_of(runtime):
    (job,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    return job, job["template"]["spec"]["template"]


@pytest.mark.parametrize("name", STACKS)
def test_every_runtime_keeps_the_contract(name):
    bundle = shipped_bundle(name)
    tiers = topology.fabric_tiers(bundle.fabric)
    queues = {q["metadata"]["name"] for q in of_kind(bundle, "Queue")}
    configmaps = {(c["metadata"]["namespace"], c["metadata"]["name"]) for c in of_kind(bundle, "ConfigMap")}
    pvcs = {(c["metadata"]["namespace"], c["metadata"]["name"]) for c in of_kind(bundle, "PersistentVolumeClaim")}
    training_namespaces = {c["metadata"]["namespace"] for c in of_kind(bundle, "ConfigMap")
                           if c["metadata"]["name"].startswith("nccl-")}
    runtimes = runtimes_of(name)
    assert runtimes
    for rt in runtimes:
        assert rt["metadata"]["labels"]["trainer.kubeflow.org/framework"] == "torch"
        nt = rt["spec"]["podGroupPolicy"]["volcano"]["networkTopology"]
        assert set(nt) == {"mode", "highestTierAllowed"}            # explicit; no pruned highestTierName
        assert tiers.lowest <= nt["highestTierAllowed"] <= tiers.highest
        assert rt["spec"]["template"]["metadata"]["annotations"]["scheduling.volcano.sh/queue-name"] in queues
        job, pod = pod_of(rt)
        assert job["name"] == "node"
        assert job["template"]["metadata"]["labels"]["trainer.kubeflow.org/trainjob-ancestor-step"] == "trainer"
        spec = pod["spec"]
        assert spec["schedulerName"] == "volcano"
        (container,) = spec["containers"]
        assert container["name"] == "node"
        assert ":" in container["image"] and not container["image"].endswith(":latest")
        (source,) = container["envFrom"]
        for namespace in training_namespaces:   # the ConfigMap exists wherever TrainJobs run
            assert (namespace, source["configMapRef"]["name"]) in configmaps
        requests, limits = container["resources"]["requests"], container["resources"]["limits"]
        assert {"cpu", "memory"} <= set(requests)
        extended = [r for r in requests if r not in ("cpu", "memory")]
        assert "nvidia.com/gpu" in extended
        for resource in extended:
            assert requests[resource] == limits[resource]
        (volume,) = [v for v in spec["volumes"] if "emptyDir" in v]
        claims = [v for v in spec["volumes"] if "persistentVolumeClaim" in v]
        assert len(spec["volumes"]) == 1 + len(claims)   # /dev/shm and the stack's claims only
        for claim in claims:   # a claim the stack renders in every namespace a TrainJob may run in
            for namespace in training_namespaces:
                assert (namespace, claim["persistentVolumeClaim"]["claimName"]) in pvcs
        assert volume["emptyDir"]["medium"] == "Memory" and parse_quantity(volume["emptyDir"]["sizeLimit"]) > 0
        assert {"name": volume["name"], "mountPath": "/dev/shm"} in container["volumeMounts"]
        assert parse_quantity(volume["emptyDir"]["sizeLimit"]) <= parse_quantity(limits["memory"])


def test_prod_runtimes_are_hard_tier1_and_tolerate_the_gpu_taint():
    runtimes = runtimes_of("prod")
    modes = {(rt["spec"]["podGroupPolicy"]["volcano"]["networkTopology"]["mode"],
              rt["spec"]["podGroupPolicy"]["volcano"]["networkTopology"]["highestTierAllowed"]) for rt in runtimes}
    assert modes == {("hard", 1), ("hard", 2)}
    for rt in runtimes:
        _, pod = pod_of(rt)
        assert pod["spec"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present",
                                               "effect": "NoSchedule"}]
        container = pod["spec"]["containers"][0]
        assert container["resources"]["limits"]["nvidia.com/hostdev"] == 8      # RDMA: one VF per GPU
        assert container["securityContext"] == {"allowPrivilegeEscalation": False,
                                                "capabilities": {"drop": ["ALL"], "add": ["IPC_LOCK"]}}
        assert container["envFrom"] == [{"configMapRef": {"name": "nccl-infiniband"}}]
        assert pod["spec"]["priorityClassName"].startswith("training-")
    tier1 = [rt for rt in runtimes if rt["metadata"]["name"] == "torch-h100-sxm-tier1-hard"][0]
    assert tier1["metadata"]["annotations"]["trainstack.io/max-nodes"] == "32"   # one leaf


def test_dev_runtimes_are_soft_and_sized_from_the_pool():
    runtimes = {rt["metadata"]["name"]: rt for rt in runtimes_of("dev")}
    assert set(runtimes) == {"torch-default-tier2-soft", "torch-default-1gpu-tier2-soft"}
    for rt in runtimes.values():
        assert rt["spec"]["podGroupPolicy"]["volcano"]["networkTopology"]["mode"] == "soft"
        _, pod = pod_of(rt)
        assert "tolerations" not in pod["spec"] and "hostNetwork" not in pod["spec"]
    _, one = pod_of(runtimes["torch-default-1gpu-tier2-soft"])
    # 1 of 8 GPUs: 1/8 of 192 CPUs and 1800Gi, minus 10%.
    assert one["spec"]["containers"][0]["resources"]["requests"] == {
        "cpu": "21", "memory": "202Gi", "nvidia.com/gpu": 1}


def test_host_network_only_where_a_stack_asks():
    for name in STACKS:
        for rt in runtimes_of(name):
            _, pod = pod_of(rt)
            spec = pod["spec"]
            if not spec.get("hostNetwork"):
                assert "dnsPolicy" not in spec and "affinity" not in spec
                continue
            assert name == "staging"
            assert spec["dnsPolicy"] == "ClusterFirstWithHostNet"
            label = pod["metadata"]["labels"]["trainstack.io/host-network"]
            (term,) = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            assert term == {"labelSelector": {"matchLabels": {"trainstack.io/host-network": label}},
                            "namespaceSelector": {},   # host-network pods of every namespace share the ports
                            "topologyKey": "kubernetes.io/hostname"}
    assert any(pod_of(rt)[1]["spec"].get("hostNetwork") for rt in runtimes_of("staging"))


def test_one_runtime_per_topology_policy():
    for name in STACKS:
        names = [rt["metadata"]["name"] for rt in runtimes_of(name)]
        assert len(names) == len(set(names))


@pytest.mark.parametrize("runtime, path, words", [
    ({"topology": {"mode": "hard", "highestTierAllowed": 4}}, "runtimes.runtimes[0].topology.highestTierAllowed",
     "a tier of this fabric (1..3)"),
    ({"topology": {"mode": "hard", "highestTierAllowed": 0}}, "runtimes.runtimes[0].topology.highestTierAllowed",
     "Pending forever"),
    ({"gpus": 16}, "runtimes.runtimes[0].gpus", "at most 8"),
    ({"cpu": 500}, "runtimes.runtimes[0].cpu", "exceeds what a node of pool h100 can allocate"),
    ({"memory": "100Gi", "shmSize": "200Gi"}, "runtimes.runtimes[0].shmSize", "charged to the container's memory"),
    ({"queue": "nobody"}, "runtimes.runtimes[0].queue", "one of the stack's queues"),
    ({"nccl": "infiniband", "priorityClassName": "gold"}, "runtimes.runtimes[0].priorityClassName",
     "PriorityClass listed"),
    ({"image": "pytorch/pytorch:latest"}, "runtimes.runtimes[0].image", "pinned image"),
    ({"image": "pytorch/pytorch"}, "runtimes.runtimes[0].image", "pinned image"),
    ({"pool": "a100"}, "runtimes.runtimes[0].pool", "one of the node pools (h100"),
    ({"numNodes": 9}, "runtimes.runtimes[0].numNodes", "largest holds 8"),
    ({"topology": {"mode": "hard", "highestTierName": "leaf"}}, "runtimes.runtimes[0].topology.highestTierName",
     "this API has no highestTierName"),
    # Host network: one pod per node, so nine pods need nine nodes; a leaf has eight.
    ({"gpus": 4, "hostNetwork": True, "numNodes": 9, "topology": {"mode": "hard", "highestTierAllowed": 1}},
     "runtimes.runtimes[0].numNodes", "largest holds 8"),
])
def test_bad_runtime_options(runtime, path, words):
    with pytest.raises(InputError) as err:
        render(variant("staging", runtimes={"runtimes": [runtime]}, workloads={"trainJobs": []}))
    assert err.value.path == f"trainstack:{path}" and words in err.value.message, str(err.value)


def test_host_network_max_nodes_counts_one_pod_per_node():
    # dev: four 8-GPU nodes per leaf, no RDMA devices to ration.
    bundle = render(variant("dev", workloads={"trainJobs": []}, runtimes={"runtimes": [
        {"gpus": 4, "topology": {"mode": "hard", "highestTierAllowed": 1}},
        {"gpus": 4, "hostNetwork": True, "topology": {"mode": "hard", "highestTierAllowed": 1}}]}))
    hints = {rt["metadata"]["name"]: rt["metadata"]["annotations"]["trainstack.io/max-nodes"]
             for rt in of_kind(bundle, "ClusterTrainingRuntime")}
    assert hints == {"torch-default-4gpu-tier1-hard": "8", "torch-default-4gpu-tier1-hard-hostnet": "4"}


def test_duplicate_runtime_names_are_refused():
    with pytest.raises(InputError) as err:
        render(variant("staging", runtimes={"runtimes": [{}, {}]}, workloads={"trainJobs": []}))
    assert "already used by runtimes.runtimes[0]" in err.value.message


def test_soft_tier_is_reported_as_ignored():
    bundle = render(variant("staging", runtimes={"runtimes": [{"topology": {"mode": "soft", "highestTierAllowed": 1}}]},
                            workloads={"trainJobs": []}))
    assert any("soft mode ignores the tier" in w for w in bundle.warnings)


def test_rdma_transport_without_rdma_devices_warns():
    bundle = render(variant("dev", nccl={"transport": "infiniband"}))
    assert any("lists no RDMA device resource" in w for w in bundle.warnings)


def test_socket_ifname_is_a_pod_interface_and_host_network_runtimes_keep_host_names():
    """The NCCL ConfigMaps serve pods in their own network namespace; host names go only to
    host-network runtimes, through container env (which overrides envFrom)."""
    with pytest.raises(InputError) as err:
        render(variant("staging", nccl={"socketIfname": "=bond0"}))
    assert err.value.path == "trainstack:nccl.socketIfname" and "no socket interface found" in err.value.message
    assert err.value.rule == "nccl-ifname-pod-network"
    bundle = render(variant("staging", nccl={"socketIfname": "^lo,docker", "hostSocketIfname": "=bond0"}))
    seen = set()
    for rt in of_kind(bundle, "ClusterTrainingRuntime"):
        (container,) = pod_of(rt)[1]["spec"]["containers"]
        host = bool(pod_of(rt)[1]["spec"].get("hostNetwork"))
        env = {e["name"]: e["value"] for e in container.get("env", [])}
        assert env.get("NCCL_SOCKET_IFNAME") == ("=bond0" if host else None), rt["metadata"]["name"]
        seen.add(host)
    assert seen == {True, False}
    for cm in of_kind(bundle, "ConfigMap"):
        if cm["metadata"]["name"].startswith("nccl-"):
            assert cm["data"]["NCCL_SOCKET_IFNAME"] == "^lo,docker"


def test_prod_nccl_ifname_exists_in_non_host_network_pods_in_deploy():
    """deploy/prod as committed: every pod that is not host-network and loads an NCCL ConfigMap gets
    an NCCL_SOCKET_IFNAME its own network namespace has."""
    import yaml
    from modules.nccl.variables import pod_ifname_problem
    from policies.framework import containers, pod_templates
    from tests.support.cli import ROOT
    objs = [yaml.safe_load(p.read_text()) for p in sorted((ROOT / "deploy" / "prod").rglob("*.yaml"))
            if p.parent.name != "charts" and p.name != "kustomization.yaml"]
    ifnames = {(o["metadata"].get("namespace"), o["metadata"]["name"]): o["data"]["NCCL_SOCKET_IFNAME"]
               for o in objs if o["kind"] == "ConfigMap" and "NCCL_SOCKET_IFNAME" in o.get("data", {})}
    assert ifnames
    checked = 0
    for obj in objs:
        for path, template in pod_templates(obj):
            if template.get("spec", {}).get("hostNetwork"):
                continue
            for _, container in containers(template, path):
                for source in container.get("envFrom", []):
                    name = source.get("configMapRef", {}).get("name")
                    for (_, cm), value in ifnames.items():
                        if cm == name:
                            assert pod_ifname_problem(value) is None, (obj["metadata"]["name"], value)
                            checked += 1
    assert checked >= 3   # the runtimes, the burn-in Job and the eval Deployment
