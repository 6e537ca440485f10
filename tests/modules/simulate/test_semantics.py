"""Hand-checked cases for each Volcano v1.15 semantic the simulator models (README, "What it models")."""
from decimal import Decimal

import pytest

from modules.simulate.engine import simulate
from modules.simulate.jobs import TOP_NAME, Job, Partition, Pod, Topology
from modules.simulate.scheduler import SchedulerSettings, settings_from_conf
from tests.modules.simulate.fabrics import gpus, pool, tree

TWO_LEAVES = {"spine": {"leaf-1": 4, "leaf-2": 4}}
FAT_TREE = {"core": {"spine-1": {"leaf-1": 4, "leaf-2": 4}, "spine-2": {"leaf-3": 4, "leaf-4": 4}}}


def job(name: str, pods: int, topology: Topology | None = Topology("hard", 1), *, gpu: int = 8,
        min_available: int | None = None, partitions: list[Partition] | None = None) -> Job:
    return Job(name, "Job", [Pod(f"{name}-{i}", gpus(gpu), gpu) for i in range(pods)],
               pods if min_available is None else min_available, topology, partitions or [])


def full(nodes: list[str], gpu: int = 8) -> dict:
    return {n: {"nvidia.com/gpu": Decimal(gpu)} for n in nodes}


def run(spec, jobs, **kwargs):
    fabric = spec if not isinstance(spec, dict) else tree(spec)
    result = simulate(fabric, jobs, **kwargs)
    names = result.cluster.node_names
    aware = {o.job: o for o in result.outcomes["topology-aware"]}
    return result, aware, lambda o: [names[n] for _, n in o.pods]


# --- hard mode ----------------------------------------------------------------------------------

def test_hard_job_fits_in_one_leaf():
    _, aware, nodes = run(TWO_LEAVES, [job("a", 3)])
    assert (aware["a"].status, aware["a"].hypernode, aware["a"].tier) == ("placed", "leaf-1", 1)
    assert nodes(aware["a"]) == ["n001", "n002", "n003"]


def test_hard_job_prefers_the_fuller_leaf_that_still_fits():
    # leaf-1 has 2 nodes busy: binpack scores it higher for a 2-pod gang, and too small for 3 pods.
    usage = full(["n001", "n002"])
    _, aware, nodes = run(TWO_LEAVES, [job("small", 2), job("wide", 3)], usage=usage)
    assert aware["small"].hypernode == "leaf-1" and nodes(aware["small"]) == ["n003", "n004"]
    assert aware["wide"].hypernode == "leaf-2"


def test_equal_scores_break_ties_by_name_not_fabric_order():
    _, aware, _ = run({"spine": {"leaf-b": 2, "leaf-a": 2}}, [job("a", 1)])
    assert aware["a"].hypernode == "leaf-a"


def test_hard_job_larger_than_any_allowed_hypernode_is_pending_forever_and_takes_nothing():
    result, aware, nodes = run(TWO_LEAVES, [job("big", 5), job("next", 4)])
    assert aware["big"].status == "pending" and "Pending forever" in aware["big"].reason
    assert aware["big"].pods == [] and aware["big"].hypernode is None
    assert nodes(aware["next"]) == ["n001", "n002", "n003", "n004"]      # the gang took nothing


def test_hard_job_without_room_now_is_pending_with_where_it_would_fit():
    _, aware, _ = run(TWO_LEAVES, [job("a", 3), job("b", 3), job("c", 2)])
    assert aware["c"].status == "pending"
    assert "now" in aware["c"].reason and "leaf-1, tier 1" in aware["c"].reason


def test_tier_below_the_lowest_is_pending_forever():
    _, aware, _ = run(TWO_LEAVES, [job("zero", 1, Topology("hard", 0))])
    assert aware["zero"].status == "pending"
    assert "below the lowest tier" in aware["zero"].reason and "Pending forever" in aware["zero"].reason


def test_hard_job_climbs_to_the_spine_when_allowed():
    _, aware, _ = run(TWO_LEAVES, [job("a", 6, Topology("hard", 2))])
    assert (aware["a"].hypernode, aware["a"].tier) == ("spine", 2)


# --- soft mode, the cluster-top, tier names ---------------------------------------------------

def test_soft_job_takes_the_smallest_domain_that_fits_and_climbs_tiers():
    usage = full(["n001", "n002", "n003", "n005", "n006", "n007"])     # one free node per leaf of spine-1
    _, aware, nodes = run(FAT_TREE, [job("one", 1, Topology("soft")), job("two", 2, Topology("soft")),
                                     job("five", 5, Topology("soft"))], usage=usage)
    assert (aware["one"].hypernode, aware["one"].tier) == ("leaf-1", 1)
    # leaf-1 is now full, leaf-2 has one free node: two pods fit no leaf of spine-1 but fit leaf-3.
    assert (aware["two"].hypernode, aware["two"].tier) == ("leaf-3", 1)
    assert (aware["five"].hypernode, aware["five"].tier) == ("spine-2", 2)


def test_soft_job_lands_in_the_cluster_top_when_no_hypernode_holds_it():
    two_roots = {"spine-a": {"leaf-1": 2}, "spine-b": {"leaf-2": 2}}
    _, aware, _ = run(two_roots, [job("soft", 3, Topology("soft")), job("hard", 1, Topology("hard", 2))])
    assert (aware["soft"].hypernode, aware["soft"].tier) == (TOP_NAME, 3)
    assert aware["hard"].status == "placed"          # a fourth node is still free


@pytest.mark.parametrize("tier", [3, 7])
def test_hard_tier_at_or_above_the_cluster_top_is_like_soft(tier):
    two_roots = {"spine-a": {"leaf-1": 2}, "spine-b": {"leaf-2": 2}}
    _, aware, _ = run(two_roots, [job("a", 3, Topology("hard", tier))])
    assert (aware["a"].status, aware["a"].hypernode) == ("placed", TOP_NAME)


def test_hard_tier_at_the_highest_real_tier_never_uses_the_cluster_top():
    two_roots = {"spine-a": {"leaf-1": 2}, "spine-b": {"leaf-2": 2}}
    _, aware, _ = run(two_roots, [job("a", 3, Topology("hard", 2))])
    assert aware["a"].status == "pending" and "Pending forever" in aware["a"].reason


def test_highest_tier_name_resolves_through_tier_names():
    _, aware, _ = run(TWO_LEAVES, [job("a", 5, Topology("hard", tier_name="leaf")),
                                   job("b", 5, Topology("hard", tier_name="spine"))])
    assert aware["a"].status == "pending"
    assert (aware["b"].hypernode, aware["b"].tier) == ("spine", 2)


@pytest.mark.parametrize("topology", [Topology("hard", tier_name="rack"), Topology("hard"), None],
                         ids=["unknown-tier-name", "hard-without-tier", "no-network-topology"])
def test_unconstrained_jobs_are_placed_anywhere(topology):
    _, aware, nodes = run(TWO_LEAVES, [job("a", 6, topology)])
    assert aware["a"].status == "placed"
    assert (aware["a"].hypernode, aware["a"].tier) == ("spine", 2)     # the smallest HyperNode holding it
    assert len(nodes(aware["a"])) == 6


def test_unknown_tier_name_says_why_it_is_ignored():
    result, aware, _ = run(TWO_LEAVES, [job("a", 9, Topology("hard", tier_name="rack"))])
    assert aware["a"].status == "pending"
    assert "matches no tierName" in aware["a"].reason


def test_unconstrained_job_still_lands_in_one_leaf_when_one_fits():
    usage = full(["n001"])
    _, aware, _ = run(TWO_LEAVES, [job("a", 4, None)], usage=usage)
    assert aware["a"].hypernode == "leaf-2"


# --- mixed depth: nodes found only through the lowest tier ----------------------------------------

def mixed():
    # leaf-1 at tier 1 (2 nodes); rack-x is a leaf at tier 2 (2 nodes), a sibling under the tier-3 spine.
    return tree({"spine": {"leaf-1": 2, "rack-x": 2}}, tiers={"rack-x": 2, "spine": 3},
                tier_names={1: "leaf", 2: "rack", 3: "spine"})


def test_nodes_under_a_higher_leaf_are_unreachable_for_hard_jobs():
    _, aware, nodes = run(mixed(), [job("one", 1, Topology("hard", 2)), job("three", 3, Topology("hard", 3)),
                                    job("fill", 1, Topology("hard", 1)), job("more", 1, Topology("hard", 3))])
    assert nodes(aware["one"]) == ["n001"]
    assert aware["three"].status == "pending" and "Pending forever" in aware["three"].reason
    assert nodes(aware["fill"]) == ["n002"]
    assert aware["more"].status == "pending"          # n003 and n004 are free but in no lowest-tier HyperNode


def test_soft_jobs_reach_higher_leaves_through_the_cluster_top():
    _, aware, nodes = run(mixed(), [job("soft", 3, Topology("soft"))])
    assert (aware["soft"].hypernode, aware["soft"].tier) == (TOP_NAME, 4)
    # Neither the spine (2 reachable nodes) nor rack-x holds 3 pods: equally empty, so by name.
    assert nodes(aware["soft"]) == ["n003", "n004", "n001"]


# --- gangs and partitions -----------------------------------------------------------------------

def test_gang_is_all_or_nothing():
    usage = full(["n001", "n002", "n003", "n004", "n005"])
    result, aware, _ = run(TWO_LEAVES, [job("a", 4, None)], usage=usage)
    assert aware["a"].status == "pending" and aware["a"].pods == []
    assert all(result.cluster.node_used[i] == [0] * len(result.cluster.resources)
               for i in range(5, 8))                  # nothing was left behind on the free nodes


def test_pods_beyond_min_available_are_placed_when_they_fit():
    _, aware, nodes = run(TWO_LEAVES, [job("a", 6, min_available=4)])
    assert aware["a"].status == "placed" and len(nodes(aware["a"])) == 4
    assert "2 of 6 pods beyond minAvailable (4)" in aware["a"].reason


def test_min_available_zero_still_needs_one_pod():
    usage = full([f"n00{i}" for i in range(1, 9)])
    _, aware, _ = run(TWO_LEAVES, [job("a", 2, None, min_available=0)], usage=usage)
    assert aware["a"].status == "pending"


def test_small_pods_pack_onto_nodes():
    _, aware, nodes = run(TWO_LEAVES, [job("a", 4, gpu=4), job("b", 1, gpu=2), job("c", 1, gpu=4)])
    assert nodes(aware["a"]) == ["n001", "n001", "n002", "n002"]
    assert nodes(aware["b"]) == ["n003"]
    assert nodes(aware["c"]) == ["n003"]              # binpack: the fuller node first


def test_each_partition_sits_in_one_hypernode_of_its_tier():
    parts = [Partition(f"p{k}", tuple(range(3 * k, 3 * k + 3)), Topology("hard", 1)) for k in range(2)]
    usage = full(["n001"])
    _, aware, nodes = run(TWO_LEAVES, [job("a", 6, Topology("hard", 2), partitions=parts)], usage=usage)
    assert (aware["a"].hypernode, aware["a"].tier) == ("spine", 2)
    placed = nodes(aware["a"])
    assert placed[:3] == ["n002", "n003", "n004"] and sorted(placed[3:]) == ["n005", "n006", "n007"]


def test_partition_too_big_for_its_tier_keeps_the_job_pending():
    parts = [Partition("p0", tuple(range(5)), Topology("hard", 1))]
    _, aware, _ = run(TWO_LEAVES, [job("a", 5, Topology("hard", 2), partitions=parts)])
    assert aware["a"].status == "pending" and "partitions of 5" in aware["a"].reason


# --- scheduler configuration -------------------------------------------------------------------

def test_scheduler_conf_without_the_plugin_enforces_no_topology():
    settings = settings_from_conf("actions: enqueue, allocate\ntiers:\n- plugins: [{name: gang}, {name: binpack}]\n",
                                  "test conf")
    assert not settings.enforce_topology
    _, aware, _ = run(TWO_LEAVES, [job("a", 6)], settings=settings)
    assert aware["a"].status == "placed" and aware["a"].tier == 2


def test_scheduler_conf_weights_follow_volcano_argument_parsing():
    conf = """
tiers:
- plugins:
  - name: network-topology-aware
    arguments:
      weight: 10
      hypernode.binpack.cpu: -3
      hypernode.binpack.memory: "7"
      hypernode.binpack.resources: nvidia.com/gpu, example.com/foo
      hypernode.binpack.resources.nvidia.com/gpu: 5
"""
    settings = settings_from_conf(conf, "test conf")
    assert settings.enforce_topology and settings.plugin_weight == 10
    assert dict(settings.weights) == {"cpu": 1, "memory": 1, "nvidia.com/gpu": 5, "example.com/foo": 1}


def test_weights_decide_between_hypernodes():
    # leaf-1: GPUs half used; leaf-2: CPUs nearly all used. GPU-weighted binpack prefers leaf-1.
    usage = {**full(["n001", "n002"]), "n005": {"cpu": Decimal(190)}, "n006": {"cpu": Decimal(190)},
             "n007": {"cpu": Decimal(190)}}
    gpu_heavy = SchedulerSettings(weights={"nvidia.com/gpu": 5, "cpu": 1, "memory": 1})
    cpu_only = SchedulerSettings(weights={"cpu": 1})
    _, aware, _ = run(TWO_LEAVES, [job("a", 1, gpu=1)], usage=usage, settings=gpu_heavy)
    assert aware["a"].hypernode == "leaf-1"
    _, aware, _ = run(TWO_LEAVES, [job("a", 1, gpu=1)], usage=usage, settings=cpu_only)
    assert aware["a"].hypernode == "leaf-2"


# --- baseline, lower bound, totals --------------------------------------------------------------

def test_oblivious_packs_first_fit_in_fabric_order_and_ignores_topology():
    result, _, nodes = run(TWO_LEAVES, [job("a", 3), job("b", 3), job("zero", 1, Topology("hard", 0))])
    oblivious = {o.job: o for o in result.outcomes["oblivious"]}
    assert nodes(oblivious["a"]) == ["n001", "n002", "n003"]
    assert nodes(oblivious["b"]) == ["n004", "n005", "n006"] and oblivious["b"].hypernode == "spine"
    assert oblivious["zero"].status == "placed"


def test_lower_bound_places_each_job_alone_on_the_empty_fabric():
    result, _, _ = run(TWO_LEAVES, [job("a", 4), job("b", 4), job("c", 4), job("d", 6, None)],
                       usage=full(["n001"]))
    bound = {o.job: o for o in result.outcomes["lower-bound"]}
    assert [bound[j].hypernode for j in "abc"] == ["leaf-1"] * 3
    assert (bound["d"].hypernode, bound["d"].tier) == ("spine", 2)


def test_totals_cover_the_jobs_every_strategy_placed():
    result, _, _ = run(TWO_LEAVES, [job("a", 3), job("b", 3), job("big", 5), job("zero", 1, Topology("hard", 0))])
    assert result.common == ["a", "b"]
    for name, outcomes in result.outcomes.items():
        assert result.totals[name] == pytest.approx(sum(o.allreduce_s for o in outcomes if o.job in ("a", "b")))
    assert result.totals["topology-aware"] < result.totals["oblivious"]


def test_existing_usage_is_held_against_nodes():
    usage = full(["n001", "n002", "n003", "n004", "n005"], gpu=8)
    _, aware, nodes = run(TWO_LEAVES, [job("a", 3, None), job("b", 1, None)], usage=usage)
    assert nodes(aware["a"]) == ["n006", "n007", "n008"]
    assert aware["b"].status == "pending"


def test_pools_with_different_gpus():
    fabric = tree(TWO_LEAVES, pools=[pool("small", gpus=4, match="n00[1-4]"), pool("big", gpus=8)])
    _, aware, nodes = run(fabric, [job("a", 4, gpu=8), job("b", 2, gpu=4)])
    assert aware["a"].hypernode == "leaf-2"
    assert aware["b"].hypernode == "leaf-1"


def test_requests_for_resources_no_node_offers_are_pending_forever():
    bad = Job("rdma", "Job", [Pod("rdma-0", {"example.com/rdma": Decimal(1)}, 0)], 1, None)
    ignored = Job("disk", "Job", [Pod("disk-0", {"ephemeral-storage": Decimal(10**9), "cpu": Decimal(1)}, 0)], 1, None)
    _, aware, _ = run(TWO_LEAVES, [bad, ignored])
    assert aware["rdma"].status == "pending" and "no node offers example.com/rdma" in aware["rdma"].reason
    assert aware["disk"].status == "placed"


def test_where_binpack_loses_to_first_fit_fractional_gangs_in_a_fragmented_leaf():
    """Documented limit (README): the plugin's binpack picks the fuller leaf, which holds the gang
    only by splitting it unevenly; first-fit lands on whole empty nodes. A node running 2 of its
    8 GPUs drives 2 of 8 NICs, so the uneven placement's ring is slower."""
    fabric = {"spine": {"leaf-a": 4, "leaf-b": 4}}
    usage = {"n005": {"nvidia.com/gpu": Decimal(6)}, "n006": {"nvidia.com/gpu": Decimal(2)}}
    result, aware, nodes = run(fabric, [job("a", 12, None, gpu=2)], usage=usage)
    oblivious = result.outcomes["oblivious"][0]
    assert aware["a"].hypernode == "leaf-b" and len(set(nodes(aware["a"]))) == 4
    assert oblivious.hypernode == "leaf-a" and len(set(nodes(oblivious))) == 3
    assert aware["a"].allreduce_s > oblivious.allreduce_s


def test_equal_scores_go_to_the_hypernode_already_holding_the_job():
    """Volcano's taskNum tie-break (§4.5b), used for a job's later SubJobs: among HyperNodes with the
    same binpack score, the one holding more of the job's pods wins, before the name."""
    from modules.simulate.engine import build_cluster, resource_names
    from modules.simulate.scheduler import TopologyAware

    fabric = tree(TWO_LEAVES)
    settings = SchedulerSettings()
    usage = full(["n001", "n005"])                         # leaf-1 and leaf-2 in the same state
    cluster = build_cluster(fabric, resource_names(fabric, [], usage), settings, usage)
    aware = TopologyAware(cluster, settings)
    leaves = cluster.candidates_at[1]
    need = cluster.need(gpus(8))
    assert [cluster.g_name[g] for g in aware.choose(leaves, need, need, 1, 8)] == ["leaf-1", "leaf-2"]
    holding = [cluster.node_index["n005"]]                 # the job already has a pod on n005
    assert [cluster.g_name[g] for g in aware.choose(leaves, need, need, 1, 8, holding)] == ["leaf-2", "leaf-1"]


# --- node-level room, partitions, the cheapest lower bound ---------------------------------------

def big_pod(name: str, gpu: int = 4, memory_gib: int = 1500, cpu: int = 8) -> Pod:
    return Pod(name, {"nvidia.com/gpu": Decimal(gpu), "cpu": Decimal(cpu), "memory": Decimal(memory_gib * 2**30)}, gpu)


def test_an_unconstrained_gang_goes_to_the_leaf_whose_nodes_have_room_for_its_pods():
    # One 1500 GiB pod per 1800 GiB node: leaf-a (5 nodes) has the free GPUs for 6 pods but the
    # memory for 5; leaf-b (6 nodes) holds them all. Free GPUs alone would split the gang.
    gang = Job("mem", "Job", [big_pod(f"mem-{i}") for i in range(6)], 6, None)
    result, aware, nodes = run({"spine": {"leaf-a": 5, "leaf-b": 6}}, [gang])
    assert aware["mem"].hypernode == "leaf-b" and len(set(nodes(aware["mem"]))) == 6
    assert aware["mem"].allreduce_s == result.outcomes["lower-bound"][0].allreduce_s


def test_partitions_of_small_pods_use_as_few_nodes_as_they_can():
    # 3 pods of 60 CPUs fit a 192-CPU node. Two partitions of 4: 3 + 1, then 1 more on the node
    # with room and 3 on a fresh one (3, 2, 3), not a sliver on a fourth node (3, 1, 3, 1).
    pods = [Pod(f"p-{i}", {"nvidia.com/gpu": Decimal(1), "cpu": Decimal(60), "memory": Decimal(2**30)}, 1)
            for i in range(8)]
    parts = [Partition(f"p{k}", tuple(range(4 * k, 4 * k + 4)), Topology("hard", 1)) for k in range(2)]
    result, aware, nodes = run({"spine": {"leaf-1": 4}}, [Job("p", "Job", pods, 8, Topology("hard", 1), parts)])
    placed = nodes(aware["p"])
    assert sorted(placed.count(n) for n in set(placed)) == [2, 3, 3]
    assert aware["p"].allreduce_s <= result.outcomes["oblivious"][0].allreduce_s


def test_partitions_kept_inside_leaves_cost_less_than_first_fit_across_them():
    """The cost model reduces inside each partition first (cost.py): first-fit, blind to the
    partitions, splits one across two leaves and pays the spine for the whole gradient."""
    parts = [Partition(f"p{k}", tuple(range(3 * k, 3 * k + 3)), Topology("hard", 1)) for k in range(2)]
    result, aware, nodes = run({"spine": {"leaf-1": 4, "leaf-2": 4, "leaf-3": 4}},
                               [job("a", 6, Topology("hard", 2), partitions=parts)], usage=full(["n001", "n002"]))
    oblivious = result.outcomes["oblivious"][0]
    assert nodes(oblivious) == ["n003", "n004", "n005", "n006", "n007", "n008"]   # pods 0-2 span two leaves
    placed = nodes(aware["a"])
    assert len({result.fabric.nodes[n].leaf for n in placed[:3]}) == 1
    assert len({result.fabric.nodes[n].leaf for n in placed[3:]}) == 1
    assert aware["a"].allreduce_s < oblivious.allreduce_s


def test_lower_bound_takes_the_cheapest_hypernode_not_the_binpack_choice():
    # Volcano's binpack fills the small-node leaf (16 of its 16 GPUs); two 8-GPU nodes hold the
    # same gang in half the nodes, which the lower bound finds.
    fabric = tree(TWO_LEAVES, pools=[pool("small", gpus=4, match="n00[1-4]"), pool("big", gpus=8)])
    result, aware, _ = run(fabric, [job("a", 8, gpu=2)])
    bound = result.outcomes["lower-bound"][0]
    assert aware["a"].hypernode == "leaf-1" and bound.hypernode == "leaf-2"
    assert bound.allreduce_s < aware["a"].allreduce_s


def test_a_gang_of_small_pods_leaves_a_nearly_full_node_alone_when_others_have_room():
    # Rooms for 1-GPU pods: n001 1, n002 6, n003 8, n004 8. Twenty pods fit without n001; on it one
    # rank would drive one of eight NICs and set the pace of the whole ring.
    usage = {"n001": {"nvidia.com/gpu": Decimal(7)}, "n002": {"nvidia.com/gpu": Decimal(2)}}
    result, aware, nodes = run({"spine": {"leaf-a": 2, "leaf-b": 2}}, [job("a", 20, None, gpu=1)], usage=usage)
    placed = nodes(aware["a"])
    assert "n001" not in placed and sorted(placed.count(n) for n in set(placed)) == [6, 6, 8]
    assert aware["a"].allreduce_s <= result.outcomes["oblivious"][0].allreduce_s
