"""`simulate --submit`: every "no" explained. For a job that stays pending, each candidate victim
considered, with the action, tier and plugin that refused it, and what the job lacks; the outcome
names only the actions that evicted. Text and JSON."""
from __future__ import annotations

import json

import pytest
import yaml

from tests.modules.simulate.test_whatif import NEW_CONF, OLD_CONF, SUBMIT, snapshot
from tests.support.cli import run

RECLAIM_CONF = """actions: "enqueue, allocate, reclaim"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: proportion}]
- plugins: [{name: predicates}]
"""
PREEMPT_CONF = """actions: "enqueue, allocate, preempt, gangpreempt"
tiers:
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}]
- plugins: [{name: predicates}, {name: capacity}]
"""


def _run(tmp_path, objects, submit=SUBMIT, fmt="json"):
    snap = tmp_path / "snap.yaml"
    snap.write_text(yaml.safe_dump_all(objects))
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump(submit))
    out = run("simulate", "--snapshot", str(snap), "--submit", str(job), "--format", fmt)
    assert out.code == 0, out.err
    return json.loads(out.out) if fmt == "json" else out.out


def _refused(report, job):
    return {(r["action"], r["tier"], r["plugin"]) for r in report["refused"] if r["job"] == job}


def test_a_pending_job_lists_each_candidate_with_the_action_tier_and_plugin_that_refused_it(tmp_path):
    report = _run(tmp_path, snapshot(NEW_CONF))
    assert report["outcome"] == "pending" and report["evictions"] == []
    research = [r for r in report["refused"] if r["job"] == "research/research-run"]
    assert len({r["pod"] for r in research}) == 7
    assert ("gangreclaim", 1, "capacity") in _refused(report, "research/research-run")
    assert all("share at or below deserved" in r["reason"] for r in research if r["plugin"] == "capacity")
    # gangpreempt takes only from the job's own queue: said, per candidate
    assert ("gangpreempt", None, "action") in _refused(report, "batch/batch-sweep")
    assert "it lacks" in report["lacks"] and "nvidia.com/gpu 8" in report["lacks"]


def test_the_text_report_says_the_same(tmp_path):
    text = _run(tmp_path, snapshot(NEW_CONF), fmt="text")
    assert "candidates refused (per job; JSON lists every pod):" in text
    assert "research/research-run (queue research): 7 pod(s) refused by gangreclaim, tier 1, plugin capacity" in text
    assert "what it lacks: it needs" in text


def test_the_outcome_names_only_the_actions_that_evicted(tmp_path):
    report = _run(tmp_path, snapshot(OLD_CONF))
    assert report["outcome"] == "evicts"
    assert report["reason"].startswith("gangreclaim evicts 3 pod(s)") and "gangpreempt" not in report["reason"]
    assert report["refused"] == []


def _objects(conf, edit):
    objects = snapshot(conf)
    for obj in objects:
        edit(obj)
    return objects


def test_reclaimable_false_is_named(tmp_path):
    def edit(obj):
        if obj["kind"] == "Queue" and obj["metadata"]["name"] in ("batch", "research"):
            obj["spec"]["reclaimable"] = False
    report = _run(tmp_path, _objects(OLD_CONF, edit))
    assert report["outcome"] == "pending"
    reasons = {r["reason"] for r in report["refused"] if r["action"] == "gangreclaim"}
    assert "reclaimable: false: queue batch may not be reclaimed from" in reasons


@pytest.mark.parametrize("where, words", [
    ("pod", "the pod says volcano.sh/preemptable: false"),
    ("podgroup", "PodGroup batch/batch-sweep says volcano.sh/preemptable: false (read by the gang actions only)"),
])
def test_the_preemptable_annotation_is_named(tmp_path, where, words):
    def edit(obj):
        if obj["kind"] == ("Pod" if where == "pod" else "PodGroup") and obj["metadata"]["namespace"] == "batch":
            obj["metadata"].setdefault("annotations", {})["volcano.sh/preemptable"] = "false"
        if obj["kind"] == "Queue" and obj["metadata"]["name"] == "research":
            obj["spec"]["reclaimable"] = False
    report = _run(tmp_path, _objects(OLD_CONF, edit))
    assert any(words in r["reason"] and r["job"] == "batch/batch-sweep" for r in report["refused"]), report["refused"]


def test_gang_min_available_and_share_are_named_for_reclaim(tmp_path):
    # reclaim, task by task: the gang plugin keeps research's and batch's gangs (they run exactly minMember)
    report = _run(tmp_path, snapshot(RECLAIM_CONF))
    assert report["outcome"] == "pending"
    got = {(r["plugin"], r["tier"]) for r in report["refused"] if r["action"] == "reclaim"}
    assert ("gang", 1) in got
    assert any("gang minAvailable: job batch/batch-sweep runs 3 pod(s) against minAvailable 3" in r["reason"]
               for r in report["refused"])


def test_priority_is_named_for_preempt_in_the_same_queue(tmp_path):
    urgent = json.loads(json.dumps(SUBMIT))
    urgent["metadata"]["namespace"] = urgent["spec"]["queue"] = "research"
    urgent["spec"]["priorityClassName"] = "training-default"          # research-run's own priority
    report = _run(tmp_path, snapshot(PREEMPT_CONF), urgent)
    assert report["outcome"] == "pending"
    reasons = {(r["action"], r["plugin"], r["reason"]) for r in report["refused"]
               if r["job"] == "research/research-run"}
    assert ("gangpreempt", "action", "priority: job research/research-run has priority 1000, not below "
            "research/urgent's 1000") in reasons
    assert any(a == "preempt" and p == "priority" for a, p, _ in reasons)


def test_a_queue_capability_that_keeps_the_job_pending_is_named(tmp_path):
    conf = """actions: "allocate, gangpreempt, gangreclaim"
tiers:
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}, {name: capacity}]
- plugins: [{name: predicates}]
"""
    def edit(obj):
        if obj["kind"] == "Queue" and obj["metadata"]["name"] == "production":
            obj["spec"]["capability"] = {"nvidia.com/gpu": 8}
    report = _run(tmp_path, _objects(conf, edit))
    assert report["outcome"] == "pending"
    assert ("capability: queue production may hold nvidia.com/gpu 8; it runs nothing and the job asks "
            "nvidia.com/gpu 16, so gangreclaim does not act for it") in report["steps"]
