"""The NCCL ConfigMaps: one per transport profile in every training namespace, each profile's
variables as NCCL 2.30 documents them, and the stack mistakes the renderer refuses."""
from __future__ import annotations

import pytest

from modules.core.errors import InputError
from modules.core.render import render
from modules.nccl import variables
from tests.support.stacks import STACKS, of_kind, shipped, shipped_bundle, variant


def _configmaps(bundle) -> dict[tuple[str, str], dict]:
    return {(cm["metadata"]["namespace"], cm["metadata"]["name"]): cm["data"]
            for cm in of_kind(bundle, "ConfigMap")
            if cm["metadata"].get("labels", {}).get("trainstack.io/nccl-profile")}


@pytest.mark.parametrize("name", STACKS)
def test_every_profile_in_every_training_namespace(name):
    stack, maps = shipped(name), _configmaps(shipped_bundle(name))
    profiles = stack.values["nccl"]["profiles"]
    expected = {(ns, f"nccl-{p}") for ns in stack.values["trainingNamespaces"] for p in profiles}
    assert set(maps) == expected
    for data in maps.values():
        assert all(isinstance(v, str) for v in data.values()), "ConfigMap data must be strings"
        assert list(data) == sorted(data), "sorted keys keep the rendered YAML stable"
        assert variables.problems(data) == []


def test_profiles_set_their_transport():
    maps = _configmaps(shipped_bundle("prod"))
    ib, eth, nvl = (maps["training", f"nccl-{p}"] for p in ("infiniband", "ethernet", "nvlink-only"))
    assert ib["NCCL_IB_DISABLE"] == "0"
    assert ib["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{i}" for i in range(8))   # exact names: '=' prefix
    assert ib["NCCL_NET_GDR_LEVEL"] == "PHB" and ib["NCCL_CROSS_NIC"] == "0"
    assert eth["NCCL_IB_DISABLE"] == "1" and "NCCL_IB_HCA" not in eth
    assert nvl["NCCL_IB_DISABLE"] == "1" and nvl["NCCL_P2P_LEVEL"] == "NVL"
    roce = _configmaps(shipped_bundle("staging"))
    roce = next(data for (_, cm), data in roce.items() if cm == "nccl-roce")
    assert roce["NCCL_IB_GID_INDEX"] == "3" and roce["NCCL_IB_TC"] == "106"


def test_debug_level_follows_the_profile_unless_set():
    dev = _configmaps(shipped_bundle("dev"))
    assert {data["NCCL_DEBUG"] for data in dev.values()} == {"INFO"}          # development
    quiet = render(variant("dev", "quiet", nccl={"debug": "WARN"}))
    assert {data["NCCL_DEBUG"] for data in _configmaps(quiet).values()} == {"WARN"}


@pytest.mark.parametrize("nccl, path, rule", [
    ({"transport": "infiniband", "profiles": ["ethernet"]}, "nccl.profiles", None),
    ({"env": {"NCCL_IB_TIMEOUT": "forever"}}, "nccl.env.NCCL_IB_TIMEOUT", "nccl-env-valid"),
    ({"socketIfname": "=bond0"}, "nccl.socketIfname", "nccl-ifname-pod-network"),
])
def test_mistakes_name_the_path_and_the_rule(nccl, path, rule):
    with pytest.raises(InputError) as caught:
        render(variant("dev", "broken", nccl=nccl))
    assert caught.value.path == f"trainstack:{path}" or caught.value.path.endswith(path)
    assert caught.value.rule == rule


def test_algorithm_override_warns():
    bundle = render(variant("dev", "algo", nccl={"env": {"NCCL_ALGO": "ring"}}))
    assert any("NCCL_ALGO=ring" in w for w in bundle.warnings)
    assert {data["NCCL_ALGO"] for data in _configmaps(bundle).values()} == {"ring"}


@pytest.mark.parametrize("name, hint", [
    ("nccl_debug", "did you mean 'NCCL_DEBUG'?"),         # a case mistake: NCCL reads NCCL_DEBUG only
    ("Nccl_Ib_Hca", "did you mean 'NCCL_IB_HCA'?"),
    ("ib_timeout", "did you mean 'NCCL_IB_TIMEOUT'?"),     # the prefix forgotten
    ("TORCH_NCCL_BLOCKING_WAIT", None),                    # not an NCCL variable at all
])
def test_nccl_env_takes_upper_case_nccl_names_only(name, hint):
    with pytest.raises(InputError) as caught:
        render(variant("dev", "names", nccl={"env": {name: "1"}}))
    assert caught.value.path == f"trainstack:nccl.env.{name}"
    assert "expected an upper-case NCCL_ variable name" in caught.value.message
    assert (hint in caught.value.message) if hint else "did you mean" not in caught.value.message
    assert caught.value.rule == "nccl-env-valid"
