"""Pulumi entry point (`pulumi up -s <env>`). All logic lives in modules/; see docs/architecture.md."""
from pathlib import Path

from modules.core.program import run

run(Path(__file__).resolve().parent)
