"""The last look before writing (``output._refuse_credentials``): one pass over all files first,
then file by file only when that pass finds something; the same file and finding either way."""
from __future__ import annotations

import pytest

from modules.core.errors import InputError
from modules.core.output import _refuse_credentials

FILLER = {f"fabric/hypernode.leaf-{i}.yaml": b"kind: HyperNode\nmetadata:\n  name: leaf\n" * 12
          for i in range(40)}


def test_a_credential_in_one_file_among_many_is_refused_at_that_file():
    files = {**FILLER, "probe/configmap.yaml": b"url: https://probe:hunter2@push.example.com\n",
             "z.yaml": b"kind: Namespace\n"}
    with pytest.raises(InputError, match="looks like a credential") as err:
        _refuse_credentials(files, "stacks/Pulumi.t.yaml")
    assert "(output) probe/configmap.yaml" in str(err.value)
    assert "hunter2" not in str(err.value)


def test_a_match_only_across_two_files_is_no_credential():
    # Joined, "Authorization: Bearer" + the next file's first line reads as a header with a token.
    files = {"a.yaml": b"note: Authorization: Bearer", "b.yaml": b"abcdefghijklmnopqrstuvwxyz0123456789\n"}
    _refuse_credentials({**FILLER, **files}, "stacks/Pulumi.t.yaml")
    with pytest.raises(InputError, match="Authorization header"):
        _refuse_credentials({**FILLER, "a.yaml": b"note: Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789\n"},
                            "stacks/Pulumi.t.yaml")
