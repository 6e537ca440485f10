"""The capabilities trainstack renders, in rendering order.

Each name is a folder under ``modules/`` with ``schema.yaml`` (its ``trainstack:<name>`` config
section), ``render.py`` (``render(ctx) -> list[Resource | ChartRelease]``) and ``README.md``.
"""
MODULES: tuple[str, ...] = (
    "fabric",
    "nccl",
    "storage",
    "volcano",
    "trainer",
    "runtimes",
    "workloads",
    "probe",
    "monitoring",
    "autoscaling",
    "gitops",
)
