"""Stacks for the operator tests: the shipped ones, and variants of them built in memory."""
from __future__ import annotations

import copy
import functools

from modules.core.config import StackConfig, build_stack, load_project, load_stack
from modules.core.render import render
from tests.support.cli import ROOT

STACKS = ("dev", "staging", "prod")
OUR_MODULES = ("volcano", "trainer", "runtimes", "workloads")
class _Delete:
    """In overrides: remove the key. Survives deepcopy, so overrides can be merged first."""

    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        return "DELETE"


DELETE = _Delete()


def project():
    return load_project(ROOT)


@functools.lru_cache(maxsize=None)
def shipped(name: str) -> StackConfig:
    return load_stack(project(), name)


@functools.lru_cache(maxsize=None)
def shipped_bundle(name: str):
    return render(shipped(name))


def merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if value is DELETE:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def flat_config(base: str, **sections) -> dict:
    """The flat ``{"trainstack:<key>": value}`` map of a shipped stack with sections overridden
    (dicts deep-merge, DELETE removes)."""
    stack = shipped(base)
    given = merge(stack.given, sections)
    flat = {f"trainstack:{key}": value for key, value in given.items()}
    flat.update(stack.other)
    return flat


def variant(base: str, name: str = "variant", **sections) -> StackConfig:
    """A stack that is ``base`` with some sections changed (named stacks/Pulumi.<name>.yaml)."""
    return build_stack(project(), name, flat_config(base, **sections), f"stacks/Pulumi.{name}.yaml")


# Training Operator v1 on the staging fabric: no runtimes, PyTorchJobs instead of TrainJobs.
V1_SECTIONS = {
    "trainer": {"api": "v1", "version": DELETE, "elastic": True, "v1": {"schemes": ["pytorchjob"]}},
    "runtimes": DELETE,
    "gitops": DELETE,   # engine none: the overlay stays in the root kustomization
    "workloads": {
        "trainJobs": [],
        "pyTorchJobs": [
            {"name": "resnet-ddp", "queue": "team-a", "image": "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
             "workers": 3, "command": ["torchrun", "/workspace/train.py"]},
            {"name": "elastic-lm", "queue": "team-b", "image": "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
             "workers": 4, "elastic": {"minReplicas": 2, "maxReplicas": 8},
             "command": ["torchrun", "/workspace/train.py"]},
        ],
    },
}


@functools.lru_cache(maxsize=None)
def v1_stack() -> StackConfig:
    return variant("staging", "v1", **V1_SECTIONS)


@functools.lru_cache(maxsize=None)
def v1_bundle():
    return render(v1_stack())


def ours(bundle) -> list:
    return [r for r in bundle.resources if r.module in OUR_MODULES]


def of_kind(bundle, kind: str) -> list[dict]:
    return [r.obj for r in bundle.resources if r.kind == kind]
