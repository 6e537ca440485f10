"""Which ClusterTrainingRuntimes a Kubeflow Trainer v2.3.0 chart release installs itself (kubeflow/trainer
v2.3.0 ``charts/kubeflow-trainer/templates/runtimes/_runtimes.tpl``: each built-in runtime of
``files/runtimes/`` under its ``enabled`` value, all of them with ``runtimes.defaultEnabled``; the
data-cache runtime only with ``dataCache.enabled`` too). A stack knows its runtimes as it knows its
Queues: those it renders, plus these (present in the cluster, their templates unseen here)."""
from __future__ import annotations

from modules.semantics.shapes import as_dict

TRAINER_CHART = "kubeflow-trainer"
# values path under `runtimes` -> the runtime's name (metadata.name of files/runtimes/<name>.yaml)
BUILT_IN = {
    ("torchDistributed",): "torch-distributed",
    ("deepspeedDistributed",): "deepspeed-distributed",
    ("mlxDistributed",): "mlx-distributed",
    ("jaxDistributed",): "jax-distributed",
    ("xgboostDistributed",): "xgboost-distributed",
    ("torchtuneDistributed", "llama3_2_1B"): "torchtune-llama3.2-1b",
    ("torchtuneDistributed", "llama3_2_3B"): "torchtune-llama3.2-3b",
    ("torchtuneDistributed", "qwen2_5_1_5B"): "torchtune-qwen2.5-1.5b",
}
WITH_CACHE = "torch-distributed-with-cache"


def is_trainer_release(obj: dict) -> bool:
    if obj.get("kind") != "Release" or not str(obj.get("apiVersion", "")).startswith("helm.sh/"):
        return False
    return str(as_dict(obj.get("spec")).get("chart", "")).rstrip("/").rsplit("/", 1)[-1] == TRAINER_CHART


def _enabled(values: dict, path: tuple[str, ...]) -> bool:
    node = values
    for part in path:
        node = as_dict(node.get(part))
    return node.get("enabled") is True


def built_in_runtimes(manifests: list[dict]) -> frozenset[str]:
    """The ClusterTrainingRuntimes the Trainer chart release among ``manifests`` installs."""
    for obj in manifests:
        if is_trainer_release(obj):
            values = as_dict(as_dict(obj.get("spec")).get("values"))
            runtimes, cache = as_dict(values.get("runtimes")), as_dict(values.get("dataCache"))
            every = runtimes.get("defaultEnabled") is True
            out = {name for path, name in BUILT_IN.items() if every or _enabled(runtimes, path)}
            cache_runtimes = as_dict(cache.get("runtimes"))
            if cache.get("enabled") is True and _enabled(cache_runtimes, ("torchDistributedWithCache",)):
                out.add(WITH_CACHE)
            return frozenset(out)
    return frozenset()
