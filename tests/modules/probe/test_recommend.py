"""`trainstack recommend`: the cost model, the fit, the layout, the NCCL settings and the report."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules.core.context import RenderContext
from modules.core.errors import InputError
from modules.fabric.model import build_fabric
from modules.probe import recommend as rec
from modules.probe import measure, results
from tests.support.cli import run

from tests.support.observability import FIXTURES, SHIPPED, bundle, stack

RECORDED = FIXTURES / "probe-gloo-2ranks.json"
GOLDEN = FIXTURES / "recommend-prod-70b-1024.txt"
GIB, MIB = 1 << 30, 1 << 20


def models(intra_gbps=370.0, inter_gbps=384.0, alpha_intra_us=3.4, alpha_inter_us=14.0):
    return {0: rec.TierModel(0, "node", alpha_intra_us * 1e-6, intra_gbps, "test"),
            1: rec.TierModel(1, "leaf", alpha_inter_us * 1e-6, inter_gbps, "test")}


# A worked example of NCCL's ring and tree costs: g=8, B_intra=370, 8 x 48 GB/s NICs, alpha 3.4/14 us, base 8.4 us
WORKED = [   # nodes, bytes, ring, tree, hierarchical sequential, hierarchical pipelined (ms)
    (1, GIB, 5.135, 5.860, 5.135, 5.135),
    (2, GIB, 5.573, 5.888, 7.959, 5.163),
    (16, MIB, 1.196, 0.174, 0.486, 0.481),
    (16, GIB, 6.949, 5.972, 10.797, 5.719),
    (128, 64 * MIB, 10.020, 0.615, 4.276, 3.959),
    (128, GIB, 15.456, 6.056, 14.239, 9.161),
]


@pytest.mark.parametrize("nodes, size, ring, tree, seq, pipe", WORKED)
def test_cost_model_reproduces_the_reference_worked_example(nodes, size, ring, tree, seq, pipe):
    m = models()
    s = rec.span(None, nodes, 8, domain_nodes={1: 1024})
    assert rec.allreduce_ring(size, s, m) * 1e3 == pytest.approx(ring, abs=0.0015)
    assert rec.allreduce_tree(size, s, m) * 1e3 == pytest.approx(tree, abs=0.0015)
    assert rec.allreduce_hierarchical(size, s, m) * 1e3 == pytest.approx(seq, abs=0.0015)
    assert rec.allreduce_hierarchical(size, s, m, pipelined=True) * 1e3 == pytest.approx(pipe, abs=0.0015)


def test_spans_pack_nodes_into_the_fewest_domains():
    s = rec.span(None, 128, 1, domain_nodes={1: 32, 2: 256, 3: 1024})
    assert s.hops == {1: 124, 2: 3} and sum(s.hops.values()) == 127
    assert sum(s.levels.values()) == 7          # log2(128) tree levels
    assert rec.span(None, 1, 8, domain_nodes={1: 32}).hops == {}
    with pytest.raises(ValueError):
        rec.span(None, 2000, 1, domain_nodes={1: 32, 2: 256})


def synthetic(tier, ranks, nodes, alpha_intra, alpha_inter, busbw_gbps, collective="all_reduce"):
    out = []
    for size in (MIB, 4 * MIB, 16 * MIB, 64 * MIB, 256 * MIB, GIB):
        intra, inter = rec.ring_steps(collective, ranks, nodes)
        t = (intra * alpha_intra + inter * alpha_inter
             + size * measure.busbw_factor(collective, ranks) / (busbw_gbps * 1e9))
        out.append({"collective": collective, "bytes": size, "world_size": ranks, "time_s": t, "tier": tier,
                    "nodes": nodes, "backend": "nccl"})
    return out


def test_fit_recovers_known_latency_and_bandwidth():
    fabric = bundle("dev").fabric
    records = synthetic("node", 8, 1, 3.4e-6, 0, 370.0) + synthetic("leaf", 16, 2, 3.4e-6, 14e-6, 340.0)
    fitted, notes = rec.tier_models(fabric, records)
    assert fitted[0].source == "measured" and fitted[1].source == "measured"
    assert fitted[0].alpha_s == pytest.approx(3.4e-6, rel=1e-6) and fitted[0].busbw_gbps == pytest.approx(370, rel=1e-6)
    assert fitted[1].alpha_s == pytest.approx(14e-6, rel=1e-6) and fitted[1].busbw_gbps == pytest.approx(340, rel=1e-6)
    assert fitted[2].source == "fabric links"      # spine: no results, the stack's links
    assert fitted[2].busbw_gbps == fabric.link(2).bandwidth_gbps
    assert not notes


def test_fit_of_gloo_results_says_what_they_are():
    fabric = bundle("prod").fabric
    fitted, notes = rec.tier_models(fabric, results.read(str(RECORDED)))
    assert fitted[0].source == "measured" and "backend gloo" in fitted[0].detail
    assert [m.source for t, m in sorted(fitted.items()) if t] == ["fabric links"] * 3
    assert any("gloo on CPUs" in n for n in notes)


def test_exposition_text_is_read_like_json(tmp_path):
    records = [measure.record("all_reduce", s, 16, s / 3e11 + 1e-4, s / 3e11, nodes=2) for s in (MIB, GIB)]
    path = tmp_path / "pushgateway.txt"
    path.write_text(measure.exposition(records, "spine", 1.0, "nccl").replace(
        '{tier="spine"', '{instance="",job="trainstack-probe",tier="spine"'))
    loaded = results.read(str(path))
    assert [(r["bytes"], r["world_size"], r["nodes"], r["tier"], r["backend"]) for r in loaded] == [
        (MIB, 16, 2, "spine", "nccl"), (GIB, 16, 2, "spine", "nccl")]
    assert [r["time_s"] for r in loaded] == [r["time_s"] for r in records]


def test_pipeline_crosses_a_tier_slower_than_the_ones_below():
    fabric = bundle("staging").fabric    # 2 spines of 32 nodes under a core; default core link 175 GB/s
    pool = fabric.pools["h100"]
    job = rec.JobShape(7e9, 2, 512, 80, "test")
    slow_core, _ = rec.tier_models(fabric, [])
    layout = rec.choose_layout(fabric, pool, job, slow_core)
    assert (layout.tp, layout.pp, layout.dp) == (1, 2, 256)
    assert any("would cross tier core at 175" in r for r in layout.reasons)
    even = dict(slow_core)
    even[3] = rec.TierModel(3, "core", slow_core[3].alpha_s, slow_core[2].busbw_gbps, "test")
    layout = rec.choose_layout(fabric, pool, job, even)
    assert (layout.tp, layout.pp, layout.dp) == (1, 1, 512)


def test_tensor_parallel_stays_in_the_nvlink_domain():
    fabric = bundle("prod").fabric
    pool = fabric.pools["h100"]
    fitted, _ = rec.tier_models(fabric, [])
    big = rec.choose_layout(fabric, pool, rec.JobShape(405e9, 2, 4096, 80, "test"), fitted)
    assert big.tp == 8 and big.pp == 8 and big.tp * big.pp * big.dp == 4096
    small = rec.choose_layout(fabric, pool, rec.JobShape(7e9, 2, 1024, 80, "test"), fitted)
    assert small.tp == 1


# --- NCCL settings: never invalid ---------------------------------------------------------------

@pytest.mark.parametrize("env, words", [
    ({"NCCL_ALGO": "Tree"}, "Tree"),
    ({"NCCL_NTHREADS": "32"}, "invalid"),
    ({"NCCL_NTHREADS": "4"}, "invalid"),
    ({"nrings": "4"}, "invalid"),
    ({"NCCL_SOCKET_NTHREADS": "17"}, "invalid"),
])
def test_check_settings_rejects_invalid_recommendations(env, words):
    with pytest.raises(RuntimeError, match=words):
        rec.check_settings(env)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(SHIPPED), params=st.sampled_from(["1B", "7B", "13B", "70B", "180B", "405B", "1T"]),
       nodes=st.integers(min_value=1, max_value=64), dtype=st.sampled_from(sorted(rec.BYTES_PER)))
def test_recommendations_are_always_valid(name, params, nodes, dtype):
    s = stack(name)
    fabric = bundle(name).fabric
    pool = next(p for p in fabric.pools.values() if p.gpus)
    gpus = min(nodes * pool.gpus, fabric.largest_domain(fabric.highest_tier).gpus)
    try:
        result = rec.recommend(s, fabric, results.read(str(RECORDED)), params, gpus, dtype, None)
    except InputError as err:   # too few GPUs for the model: a clear error, never a crash
        assert "--gpus" in str(err) and "more than" in str(err)
        return
    env = result["nccl"]
    rec.check_settings(env)
    assert "NCCL_ALGO" not in env and "NCCL_PROTO" not in env
    layout = result["layout"]
    assert layout.tp * layout.pp * layout.dp == gpus and layout.tp <= pool.gpus
    assert all(v >= 0 for v in result["allreduce"].values())


# --- the command --------------------------------------------------------------------------------

def test_recommend_on_recorded_results_is_stable_and_explained():
    args = ("recommend", "prod", "--probe", str(RECORDED), "--model-size", "70B", "--gpus", "1024", "--accept-cpu")
    first, second = run(*args), run(*args)
    assert first.code == 0, first.err
    assert first.out == second.out
    assert first.out == GOLDEN.read_text(), "run the command above and review the diff against the golden file"
    for words in ("Layout: TP=8 x PP=1 x DP=128", "TP=8:", "PP=1:", "DP=128:", "fabric links",
                  "measured", "ring", "tree", "hierarchical", "NCCL_ALGO, NCCL_PROTO: leave unset"):
        assert words in first.out


def test_recommend_json_output():
    result = run("recommend", "staging", "--probe", str(RECORDED), "--model-size", "7B", "--format", "json",
                 "--accept-cpu")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["layout"]["tp"] * doc["layout"]["pp"] * doc["layout"]["dp"] == doc["gpus"]
    assert {t["source"] for t in doc["tiers"]} == {"measured", "fabric links"}
    rec.check_settings(doc["nccl"])


@pytest.mark.parametrize("args, words", [
    (("--model-size", "big"), "--model-size: expected a parameter count"),
    (("--model-size", "70"), "--model-size: expected a parameter count with a unit"),
    (("--gpus", "12"), "--gpus: expected a whole number of 8-GPU nodes"),
    (("--gpus", "999999"), "--gpus"),
    (("--gpus", "8", "--model-size", "1T"), "more than 8"),
])
def test_bad_arguments_are_one_line_errors(args, words):
    result = run("recommend", "prod", "--probe", str(RECORDED), "--accept-cpu", *args)
    assert result.code == 2 and words in result.err and len(result.err.strip().splitlines()) == 1


def test_bad_results_name_the_file_and_record(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"results": [{"collective": "all_reduce", "bytes": 1, "world_size": 2}]}))
    result = run("recommend", "prod", "--probe", str(bad))
    assert result.code == 2 and f"{bad}: results[0].time_s" in result.err
    assert run("recommend", "prod", "--probe", str(tmp_path / "missing.json")).code == 2


def test_results_for_unknown_tiers_are_reported(tmp_path):
    records = synthetic("rack", 16, 2, 3e-6, 1e-5, 100.0)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(records))
    fitted, notes = rec.tier_models(build_fabric(RenderContext(stack("dev"))), results.read(str(path)))
    assert any("'rack' ignored" in n for n in notes)
    assert all(m.source == "fabric links" for m in fitted.values())


def test_unfit_results_fall_back_to_links(tmp_path):
    records = synthetic("leaf", 16, 2, 3e-6, 1e-5, 100.0)[:1]    # one size: no slope
    fitted, notes = rec.tier_models(bundle("dev").fabric, records)
    assert fitted[1].source == "fabric links" and any("two message sizes" in n for n in notes)

