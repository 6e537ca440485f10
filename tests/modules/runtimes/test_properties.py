"""Random runtime and workload options: either a valid bundle or one InputError, never a crash."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules.core.errors import InputError
from modules.core.render import render
from tests.support.crds import crd_dir, is_custom, validate_cr

from tests.support.stacks import variant

maybe = st.one_of
topologies = st.one_of(st.none(), st.fixed_dictionaries({}, optional={
    "mode": st.sampled_from(["hard", "soft"]),
    "highestTierAllowed": st.one_of(st.none(), st.integers(-1, 5)),
    "highestTierName": st.one_of(st.none(), st.sampled_from(["leaf", "spine", "core", "rack"])),
}))
sizes = {
    "pool": st.sampled_from(["", "h100", "a100"]),
    "gpus": st.one_of(st.none(), st.integers(-1, 12)),
    "cpu": st.one_of(st.none(), st.sampled_from(["1", "500m", "200", "abc", 0, 64, 1000])),
    "memory": st.one_of(st.none(), st.sampled_from(["1Gi", "100Gi", "4000Gi", "1.5Ti", "x"])),
    "shmSize": st.one_of(st.none(), st.sampled_from(["1Gi", "64Gi", "900Gi"])),
    "nccl": st.sampled_from(["", "roce", "infiniband", "bogus"]),
}
runtime_entries = st.fixed_dictionaries({}, optional={
    **sizes,
    "numNodes": st.integers(0, 70),
    "topology": st.fixed_dictionaries({}, optional={
        "mode": st.sampled_from(["hard", "soft"]),
        "highestTierAllowed": st.one_of(st.none(), st.integers(-1, 5))}),
    "hostNetwork": st.booleans(),
    "queue": st.sampled_from(["", "team-a", "nobody"]),
    "image": st.sampled_from(["", "repo/img:1.0", "img", "img:latest", "img@sha256:" + "a" * 64]),
})
volcano_jobs = st.fixed_dictionaries({
    "name": st.sampled_from(["burn", "burn-2"]),
    "image": st.sampled_from(["img:1", "img"]),
    "replicas": st.integers(1, 70),
}, optional={
    **sizes,
    "minAvailable": st.one_of(st.none(), st.integers(1, 70)),
    "topology": topologies,
    "partitions": st.one_of(st.none(), st.fixed_dictionaries({"size": st.integers(1, 40)}, optional={
        "minPartitions": st.integers(0, 5), "topology": topologies})),
})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runtimes=st.lists(runtime_entries, min_size=1, max_size=3), jobs=st.lists(volcano_jobs, max_size=2),
       deployment_topology=topologies, replicas=st.integers(1, 12))
def test_random_options_never_crash(runtimes, jobs, deployment_topology, replicas):
    deployments = [{"name": "gang", "image": "img:1", "replicas": replicas, "topology": deployment_topology}]
    try:
        stack = variant("staging", runtimes={"runtimes": runtimes},
                        workloads={"volcanoJobs": jobs, "trainJobs": [], "deployments": deployments})
        bundle = render(stack)
    except InputError as err:
        assert "\n" not in str(err) and err.path.startswith("trainstack:")
        return
    if crd_dir() is not None:
        for resource in bundle.resources:
            if resource.module in ("runtimes", "workloads") and is_custom(resource.obj):
                validate_cr(resource.obj)
