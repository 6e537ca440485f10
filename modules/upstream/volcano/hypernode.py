"""Volcano v1.15.1's HyperNode validating webhook (volcano-sh/volcano ``pkg/webhooks/admission/hypernodes/validate``
``admit_hypernode.go``), our own code. v1.15.1 checks members and regex patterns only (no longer the
selectors' names: the chart's HyperNode policy does, when ``vap_enable`` installs it)."""
from __future__ import annotations

from modules.core.patterns import go_error
from modules.semantics.shapes import as_dict, as_list
from modules.upstream.cluster import Cluster
from modules.upstream.field import FieldError
from modules.upstream.webhook_error import refuse


def validate_hypernode(hypernode: dict, operation: str = "CREATE", old: dict | None = None,
                       cluster: Cluster | None = None) -> list[FieldError]:
    """``validateHyperNode``: at least one member; each regexMatch pattern compiles in Go's RE2."""
    members = as_list(as_dict(hypernode.get("spec")).get("members"))
    out: list[FieldError] = []
    if not members:
        out.append(refuse("spec.members", "hypernode.members", "member must have at least one member"))
    for i, member in enumerate(map(as_dict, members)):
        pattern = as_dict(as_dict(member.get("selector")).get("regexMatch")).get("pattern")
        if isinstance(pattern, str) and pattern:
            error = go_error(pattern)
            if error:
                out.append(refuse(f"spec.members[{i}].selector.regexMatch.pattern", "hypernode.regex",
                                  f"member regexMatch pattern is invalid: {error}", pattern))
    return out
