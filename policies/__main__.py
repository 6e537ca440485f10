"""trainstack's CrossGuard policy pack: `pulumi preview --policy-pack policies
--policy-pack-config policies/config.<stack>.json`, or `trainstack preview <stack>` without the CLI.

The engine runs this file with the pack folder as the working directory and on sys.path; the
rules live in the project's `policies` package, so the project root (this folder's parent, or
$TRAINSTACK_PROJECT_DIR) goes on sys.path instead. Nothing may be printed to stdout before the
port: PolicyPack prints it and the engine reads it from the first line.
"""
import os
import sys
from pathlib import Path

PACK_DIR = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
ROOT = Path(os.environ.get("TRAINSTACK_PROJECT_DIR") or PACK_DIR.parent).resolve()
# Import `policies.*` from the project, never this folder's modules as top-level names.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if p and Path(p).resolve() != PACK_DIR]

from policies.pack import serve  # noqa: E402

serve()
