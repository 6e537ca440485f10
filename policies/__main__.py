"""trainstack's CrossGuard policy pack: `pulumi preview --policy-pack policies
--policy-pack-config policies/config.<stack>.json`, or `trainstack preview <stack>` without the CLI.

The engine runs this file with the pack folder as the working directory and on sys.path; the
rules live in the project's `policies` package, so the folder above (the project root) goes on
sys.path instead. The stack's files are read from the project root too, or from
$TRAINSTACK_PROJECT_DIR. Nothing may be printed to stdout before the port: PolicyPack prints it
and the engine reads it from the first line.
"""
import sys
from pathlib import Path

PACK_DIR = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
# Import `policies.*` from the project, never this folder's modules as top-level names.
sys.path[:] = [str(PACK_DIR.parent)] + [p for p in sys.path if p and Path(p).resolve() != PACK_DIR]

from policies.pack import serve  # noqa: E402

serve()
