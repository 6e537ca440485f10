"""The Volcano release: pinned chart, typed scheduler configuration, discovery, queues."""
import re

import pytest
import yaml

from modules.core.errors import InputError
from modules.core.render import render
from modules.volcano import scheduler_conf

from tests.support.stacks import STACKS, of_kind, shipped_bundle, variant

VALID_ACTIONS = set(scheduler_conf.ACTIONS)


def volcano_release(bundle):
    (release,) = [r for r in bundle.releases if r.chart == "volcano"]
    return release


def parsed_conf(bundle) -> dict:
    text = volcano_release(bundle).values["custom"]["scheduler_config_override"]
    assert isinstance(text, str)
    return yaml.safe_load(text)


@pytest.mark.parametrize("name", STACKS)
def test_release_is_the_official_chart_pinned(name):
    release = volcano_release(shipped_bundle(name))
    assert (release.chart, release.repository) == ("volcano", "https://volcano-sh.github.io/helm-charts")
    assert re.fullmatch(r"\d+\.\d+\.\d+", release.version)
    assert release.values["basic"]["image_tag_version"] == f"v{release.version}"   # never :latest
    assert {"batch.volcano.sh", "scheduling.volcano.sh", "topology.volcano.sh", "bus.volcano.sh"} <= set(release.serves)


@pytest.mark.parametrize("name", STACKS)
def test_scheduler_conf_parses_with_typed_nta_arguments(name):
    conf = parsed_conf(shipped_bundle(name))
    actions = [a.strip() for a in conf["actions"].split(",")]
    assert set(actions) <= VALID_ACTIONS
    assert actions.index("enqueue") < actions.index("allocate")
    nta = scheduler_conf.plugin(conf, "network-topology-aware")
    assert nta is not None
    args = nta["arguments"]
    int_keys = [k for k in args if k in ("weight", "hypernode.binpack.cpu", "hypernode.binpack.memory",
                                         "hypernode.gradient.evict.max-hypernodes")
                or k.startswith("hypernode.binpack.resources.")]
    assert "weight" in int_keys and args["weight"] >= 1
    for key in int_keys:   # YAML ints: a quoted "5" is ignored by Volcano
        assert type(args[key]) is int, (key, args[key])
    resources = args["hypernode.binpack.resources"]
    assert isinstance(resources, str)                     # a list is silently ignored
    listed = {r.strip() for r in resources.split(",")}
    weighted = {k[len("hypernode.binpack.resources."):] for k in args if k.startswith("hypernode.binpack.resources.")}
    assert weighted == listed == {"nvidia.com/gpu"}
    assert type(args["hypernode.binpack.normal-pod.fading"]) is float
    assert type(args["hypernode.binpack.normal-pod.enable"]) is bool


def test_stacks_tune_the_plugin_differently():
    weights = {n: scheduler_conf.plugin(parsed_conf(shipped_bundle(n)), "network-topology-aware")["arguments"]
               for n in STACKS}
    assert weights["prod"]["weight"] == 20 and weights["prod"]["hypernode.binpack.resources.nvidia.com/gpu"] == 8
    assert weights["dev"]["weight"] == 10


def test_gang_eviction_actions_add_their_typed_cap():
    stack = variant("staging", volcano={"actions": ["enqueue", "allocate", "gangreclaim", "backfill"],
                                        "networkTopologyAware": {"evictMaxHyperNodes": 4}})
    args = scheduler_conf.plugin(parsed_conf(render(stack)), "network-topology-aware")["arguments"]
    assert args["hypernode.gradient.evict.max-hypernodes"] == 4


def test_explicit_binpack_resources_are_one_string():
    stack = variant("prod", volcano={"networkTopologyAware": {"binpackResources": {
        "nvidia.com/gpu": 4, "nvidia.com/hostdev": 2}}})
    args = scheduler_conf.plugin(parsed_conf(render(stack)), "network-topology-aware")["arguments"]
    assert args["hypernode.binpack.resources"] == "nvidia.com/gpu, nvidia.com/hostdev"
    assert args["hypernode.binpack.resources.nvidia.com/hostdev"] == 2


@pytest.mark.parametrize("name", STACKS)
def test_static_fabrics_switch_discovery_off(name):
    release = volcano_release(shipped_bundle(name))
    assert release.values["custom"]["controller_config_override"] == {"networkTopologyDiscovery": []}


def test_queues_per_tenant_differ_per_stack():
    names = {n: sorted(q["metadata"]["name"] for q in of_kind(shipped_bundle(n), "Queue")) for n in STACKS}
    assert names == {"dev": ["dev"], "staging": ["team-a", "team-b"], "prod": ["batch", "production", "research"]}
    production = [q for q in of_kind(shipped_bundle("prod"), "Queue") if q["metadata"]["name"] == "production"][0]
    # amounts as quantity strings: Volcano's queue policy calls quantity() on them (strings only)
    assert production["spec"] == {"weight": 6, "reclaimable": False, "capability": {"nvidia.com/gpu": "6144"},
                                  "deserved": {"nvidia.com/gpu": "4096"},
                                  "guarantee": {"resource": {"nvidia.com/gpu": "2048"}}, "priority": 100}


def test_prod_is_highly_available():
    custom = volcano_release(shipped_bundle("prod")).values["custom"]
    assert custom["leader_elect_enable"] is True and custom["scheduler_replicas"] == 2
    assert volcano_release(shipped_bundle("dev")).values["custom"]["scheduler_replicas"] == 1


@pytest.mark.parametrize("sections, path, words", [
    ({"volcano": {"actions": ["allocate", "backfill"]}}, "trainstack:volcano.actions", "include 'enqueue'"),
    ({"volcano": {"actions": ["allocate", "enqueue"]}}, "trainstack:volcano.actions", "enqueue before allocate"),
    ({"volcano": {"version": "1.13.3"}}, "trainstack:volcano.version", "1.14.0 or newer"),
    ({"volcano": {"version": "1.15"}}, "trainstack:volcano.version", "an exact chart version"),
    ({"volcano": {"queues": [{"name": "default"}]}}, "trainstack:volcano.queues[0].name", "created by Volcano"),
    ({"volcano": {"queues": [{"name": "a"}, {"name": "a"}]}}, "trainstack:volcano.queues[1].name", "listed twice"),
    ({"volcano": {"queues": [{"name": "a", "capability": {"nvidia.com/gpu": 8},
                              "guarantee": {"nvidia.com/gpu": 16}}]}},
     "trainstack:volcano.queues[0].guarantee.nvidia.com/gpu", "exceeds"),
    ({"volcano": {"queues": [{"name": "a", "guarantee": {"nvidia.com/gpu": 100}},
                              {"name": "b", "guarantee": {"nvidia.com/gpu": 100}}]}},   # dev has 128 GPUs
     "trainstack:volcano.queues[1].guarantee.nvidia.com/gpu",
     "add up to 200 nvidia.com/gpu, more than the fabric's nodes have (128)"),
    # Volcano's queue admission (queues-validating.yaml): guarantee <= deserved <= capability, per resource.
    ({"volcano": {"queues": [{"name": "a", "guarantee": {"nvidia.com/gpu": 16}}]}},
     "trainstack:volcano.queues[0].deserved", "must be >= guarantee"),
    ({"volcano": {"queues": [{"name": "a", "guarantee": {"nvidia.com/gpu": 16, "cpu": 8},
                              "deserved": {"nvidia.com/gpu": 16}}]}},
     "trainstack:volcano.queues[0].deserved", "expected deserved.cpu >= the guarantee (8)"),
    ({"volcano": {"queues": [{"name": "a", "guarantee": {"nvidia.com/gpu": 16}, "deserved": {"nvidia.com/gpu": 8}}]}},
     "trainstack:volcano.queues[0].deserved.nvidia.com/gpu", "at least the guarantee (16), got 8"),
    ({"volcano": {"queues": [{"name": "a", "capability": {"nvidia.com/gpu": "64"},
                              "deserved": {"nvidia.com/gpu": "96"}}]}},
     "trainstack:volcano.queues[0].deserved.nvidia.com/gpu", "must be <= capability"),
    ({"volcano": {"networkTopologyAware": {"weight": 0}}}, "trainstack:volcano.networkTopologyAware.weight", ">= 1"),
    ({"volcano": {"priorityClasses": [{"name": "system-high", "value": 5}]}},
     "trainstack:volcano.priorityClasses[0].name", "reserved"),
])
def test_bad_volcano_options(sections, path, words):
    with pytest.raises(InputError) as err:
        render(variant("dev", **sections))
    assert err.value.path == path and words in err.value.message
    assert "\n" not in str(err.value)


def test_classic_preempt_warns():
    bundle = render(variant("dev", volcano={"actions": ["enqueue", "allocate", "preempt", "backfill"]}))
    assert any("preempt ignores network topology" in w for w in bundle.warnings)


def test_unknown_version_renders_with_a_warning():
    bundle = render(variant("dev", volcano={"version": "1.16.0"}))
    assert any("1.16.0 is not a Volcano release trainstack knows" in w for w in bundle.warnings)
    assert not any("volcano.version" in w for w in shipped_bundle("prod").warnings)


def test_deserved_between_guarantee_and_capability_renders_and_a_mixed_resource_is_free():
    """Per resource, as upstream compares: a resource only in deserved is not bounded by guarantee."""
    stack = variant("dev", volcano={"queues": [{"name": "a", "guarantee": {"nvidia.com/gpu": 16},
                                                "deserved": {"nvidia.com/gpu": 32, "cpu": 64},
                                                "capability": {"nvidia.com/gpu": 32}}]})
    (q,) = of_kind(render(stack), "Queue")
    assert q["spec"]["deserved"] == {"cpu": "64", "nvidia.com/gpu": "32"}   # quantity strings for quantity()


def test_share_plugin_is_capacity_with_gang_eviction_or_shares_else_proportion():
    def plugins(bundle):
        return {p["name"] for tier in parsed_conf(bundle)["tiers"] for p in tier["plugins"]}
    assert "proportion" in plugins(shipped_bundle("dev")) and "capacity" not in plugins(shipped_bundle("dev"))
    shares = render(variant("dev", volcano={"queues": [{"name": "dev", "deserved": {"nvidia.com/gpu": 64}}]}))
    assert {"capacity"} == plugins(shares) & {"capacity", "proportion"}
    eviction = render(variant("dev", volcano={"actions": ["enqueue", "allocate", "gangreclaim"]}))
    assert {"capacity"} == plugins(eviction) & {"capacity", "proportion"}
    assert any("has no deserved" in w for w in eviction.warnings)


def test_prod_queues_pass_volcano_queue_admission_in_deploy():
    """deploy/prod as committed: every Queue with a guarantee has deserved >= guarantee <= capability,
    and the scheduler runs capacity (not proportion) with its gang eviction actions."""
    from modules.core.quantity import parse_quantity
    from tests.support.cli import ROOT
    folder = ROOT / "deploy" / "prod"
    queues = [yaml.safe_load(p.read_text()) for p in sorted((folder / "volcano").glob("queue.*.yaml"))]
    assert queues
    for q in queues:
        spec = q["spec"]
        guarantee, deserved, cap = spec.get("guarantee", {}).get("resource", {}), spec.get("deserved", {}), \
            spec.get("capability", {})
        for resource, amount in guarantee.items():
            assert resource in deserved and parse_quantity(deserved[resource]) >= parse_quantity(amount), q
        for resource, amount in deserved.items():
            assert resource not in cap or parse_quantity(amount) <= parse_quantity(cap[resource]), q
    # prod installs its charts with Flux: the values are the Volcano HelmRelease's
    values = yaml.safe_load((folder / "flux" / "charts" / "helmrelease.volcano.yaml").read_text())["spec"]["values"]
    conf = yaml.safe_load(values["custom"]["scheduler_config_override"])
    names = {p["name"] for tier in conf["tiers"] for p in tier["plugins"]}
    assert "gangreclaim" in conf["actions"] and "capacity" in names and "proportion" not in names


def _queue_of(obj: dict) -> str | None:
    """The Volcano queue an object's pods or gang are admitted into, if it names one."""
    spec = obj.get("spec", {})
    if obj["kind"] in ("Job", "PodGroup") and obj["apiVersion"].split("/")[0] in ("batch.volcano.sh",
                                                                                  "scheduling.volcano.sh"):
        return spec.get("queue") or "default"
    for meta in (obj["metadata"], spec.get("template", {}).get("metadata", {})):
        name = (meta.get("annotations") or {}).get("scheduling.volcano.sh/queue-name")
        if name:
            return name
    return None


@pytest.mark.parametrize("name", STACKS)
def test_queue_users_wait_for_their_open_queue(name):
    """Volcano admits Jobs and PodGroups only into an Open Queue, and the controller opens it after
    creation: Pulumi waits for status.state=Open, queue users depend on their Queue, and GitOps
    tools apply them one sync wave later."""
    bundle = shipped_bundle(name)
    queues = {r.key: r for r in bundle.resources if r.kind == "Queue"}
    for q in queues.values():
        notes = q.obj["metadata"]["annotations"]
        assert notes["pulumi.com/waitFor"] == "jsonpath={.status.state}=Open"
        assert notes["argocd.argoproj.io/sync-wave"] == "1"
    users = [r for r in bundle.resources if r.kind != "Queue" and f"Queue/{_queue_of(r.obj)}" in queues]
    assert users   # (Volcano creates the `default` queue itself: nothing in the bundle to wait for)
    for r in users:
        assert f"Queue/{_queue_of(r.obj)}" in r.depends_on, r.key
        assert int(r.obj["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]) > 1, r.key
    # Waves follow depends_on: whatever an object needs is in an earlier wave (a TrainJob after its runtime).
    wave = {r.key: int(r.obj["metadata"].get("annotations", {}).get("argocd.argoproj.io/sync-wave", 0))
            for r in bundle.resources}
    for r in bundle.resources:
        for needed in r.depends_on:
            if wave.get(needed):
                assert wave[r.key] > wave[needed], (r.key, needed)


def test_prod_queues_carry_their_readiness_wait_in_deploy():
    from tests.support.cli import ROOT
    folder = ROOT / "deploy" / "prod"
    queues = [yaml.safe_load(p.read_text()) for p in sorted((folder / "volcano").glob("queue.*.yaml"))]
    assert {q["metadata"]["annotations"]["pulumi.com/waitFor"] for q in queues} == {"jsonpath={.status.state}=Open"}
    job = yaml.safe_load((folder / "workloads" / "job.training.fabric-burnin.yaml").read_text())
    assert job["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "2"
