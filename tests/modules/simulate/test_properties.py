"""Properties over random fabrics (mixed depth and several roots included) and random job sequences."""
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules.semantics.capacity import smallest_fitting_domain
from modules.simulate.cluster import TOP, units
from modules.simulate.engine import simulate
from modules.simulate.jobs import TOP_NAME, Job, Partition, Pod, Topology, effective
from tests.modules.simulate.fabrics import gpus, pool, tree

TIER_NAMES = {1: "leaf", 2: "spine", 3: "core", 4: "tier-4"}


@st.composite
def fabrics(draw):
    counter = [0]
    pins: dict[str, int] = {}

    def switch(tier: int):
        counter[0] += 1
        name = f"s{counter[0]}"
        if tier == 1 or (tier > 1 and draw(st.integers(0, 5)) == 0):    # sometimes a leaf above tier 1
            if tier > 1:
                pins[name] = tier
            return name, draw(st.integers(1, 4))
        kids = dict(switch(tier - 1) for _ in range(draw(st.integers(1, 3))))
        pins[name] = tier
        return name, kids

    depth = draw(st.integers(1, 3))
    roots = dict(switch(depth) for _ in range(draw(st.integers(1, 2))))
    pools = [pool("small", gpus=4, match="n00[1-4]"), pool("big")] if draw(st.booleans()) else [pool()]
    return tree(roots, pools=pools, tiers=pins, tier_names=TIER_NAMES)


topologies = st.one_of(
    st.none(),
    st.builds(Topology, st.just("soft")),
    st.builds(Topology, st.just("hard"), st.integers(0, 4)),
    st.builds(Topology, st.just("hard"), st.none(), st.sampled_from(["leaf", "spine", "rack"])),
    st.just(Topology("hard")),
)


@st.composite
def jobs(draw):
    out = []
    for j in range(draw(st.integers(1, 8))):
        count = draw(st.integers(1, 6))
        per_pod = draw(st.sampled_from([1, 2, 4, 8]))
        pods = [Pod(f"j{j}-{i}", gpus(per_pod), per_pod) for i in range(count)]
        partitions = []
        size = draw(st.sampled_from([1, 2, 3]))
        if count % size == 0 and draw(st.booleans()):
            sub = draw(topologies)
            partitions = [Partition(f"p{k}", tuple(range(k * size, (k + 1) * size)), sub) for k in range(count // size)]
        minimum = count if partitions else draw(st.integers(1, count))
        out.append(Job(f"j{j}", "Job", pods, minimum, draw(topologies), partitions))
    return out


@st.composite
def scenarios(draw, fabric_strategy=None):
    fabric = draw(fabrics() if fabric_strategy is None else fabric_strategy)
    names = list(fabric.nodes)
    used = draw(st.lists(st.sampled_from(names), max_size=len(names), unique=True))
    usage = {n: {"nvidia.com/gpu": Decimal(draw(st.integers(0, fabric.nodes[n].pool.gpus)))} for n in used}
    return fabric, draw(jobs()), usage


def request_units(pod, resource):
    return units(resource, pod.requests.get(resource, Decimal(0)), round_up=True)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_placements_respect_capacity_gangs_and_constraints(scenario):
    fabric, job_list, usage = scenario
    result = simulate(fabric, job_list, usage=usage)
    c = result.cluster
    lowest = c.lowest_tier
    by_name = {job.name: job for job in job_list}

    for strategy in ("topology-aware", "oblivious"):
        load: dict[tuple[str, str], int] = {}
        for node, used in usage.items():
            for r, amount in used.items():
                load[node, r] = units(r, amount, round_up=True)
        for outcome in result.outcomes[strategy]:
            job = by_name[outcome.job]
            if not outcome.placed:
                assert outcome.pods == [] and outcome.reason
                continue
            assert len(outcome.pods) >= job.min_available
            pods = {p.name: p for p in job.pods}
            for pod, node in outcome.pods:
                for r in pods[pod].requests:
                    key = (c.node_names[node], r)
                    load[key] = load.get(key, 0) + request_units(pods[pod], r)
        for (node, r), amount in load.items():       # no node is over-committed
            alloc = fabric.nodes[node].pool.allocatable()
            assert amount <= units(r, alloc.get(r, Decimal(0)), round_up=False), (strategy, node, r)

    for outcome in result.outcomes["topology-aware"]:
        job = by_name[outcome.job]
        cons = effective(job.topology, c.tiers, fabric.tier_names)
        if cons.kind == "never":
            assert not outcome.placed
        if not outcome.placed or cons.kind != "domain":
            continue
        nodes = {c.node_names[n] for _, n in outcome.pods}
        if cons.tier < c.top_tier:                     # hard: one real HyperNode of an allowed tier
            switch = next(s for s in fabric.switches.values() if s.hypernode == outcome.hypernode)
            assert switch.tier == outcome.tier <= cons.tier
            assert nodes <= set(fabric.nodes_under(switch.name))
            assert all(fabric.switches[fabric.nodes[n].leaf].tier == lowest for n in nodes)
        else:
            assert outcome.tier <= c.top_tier
        for part in job.partitions:                    # each partition inside one HyperNode of its tier
            sub = effective(part.topology, c.tiers, fabric.tier_names, bound=outcome.tier) if part.topology else None
            if sub is None or sub.kind != "domain":
                continue
            placed = {i for i, (pod, _) in enumerate(outcome.pods)}
            part_nodes = [c.node_names[dict(outcome.pods)[job.pods[i].name]] for i in part.pods
                          if job.pods[i].name in dict(outcome.pods)]
            assert placed and len(part_nodes) == len(part.pods)
            leaves = {fabric.nodes[n].leaf for n in part_nodes}
            if len(leaves) > 1:
                common = set.intersection(*({s.name for s in fabric.ancestors(leaf)} for leaf in leaves))
                assert any(fabric.switches[s].tier <= sub.tier for s in common) or sub.tier >= c.top_tier

    # The incremental aggregates equal a recount from the nodes.
    for g in range(len(c.g_name)):
        members = [i for i, chain in enumerate(c.node_chain) if g in chain]
        for r in range(len(c.resources)):
            assert c.g_used[g][r] == sum(c.node_used[i][r] for i in members)
        if g == TOP:
            assert len(members) == len(c.node_names)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fabrics(), st.integers(1, 12), st.sampled_from([1, 2, 4, 8]), st.integers(1, 4))
def test_lower_bound_agrees_with_the_policy_capacity_logic(fabric, count, per_pod, tier):
    """The topology-satisfiable policy's smallest_fitting_domain and the simulator's lower bound agree."""
    job = Job("j", "Job", [Pod(f"j-{i}", gpus(per_pod), per_pod) for i in range(count)], count,
              Topology("hard", tier))
    result = simulate(fabric, [job])
    c = result.cluster
    if tier < c.lowest_tier or tier >= c.top_tier:
        return
    bound = result.outcomes["lower-bound"][0]
    domain = smallest_fitting_domain(fabric, count, gpus(per_pod), tier, reachable_only=True)
    if domain is None:
        assert not bound.placed
    else:
        assert bound.placed and bound.tier == domain.tier and bound.hypernode != TOP_NAME
        aware = result.outcomes["topology-aware"][0]
        assert aware.placed and aware.tier == domain.tier
