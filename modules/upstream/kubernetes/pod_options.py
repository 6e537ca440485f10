"""``PodValidationOptions`` (``pkg/apis/core/validation/validation.go``): the switches a caller of
``ValidatePodSpec`` / ``ValidatePodTemplate`` passes, which change what a pod template may hold.

The API server computes them on create from its feature gates (``GetValidationOptionsFromPodSpecAndMeta``
with no old object): ``API_SERVER_CREATE``. Volcano v1.15.1's job webhook validates every task's
template itself with ``PodValidationOptions{PodLevelResourcesEnabled: <gate>}`` and every other switch
off (``pkg/webhooks/admission/jobs/validate/admit_job.go`` ``validateTaskTemplate``):
``volcano_job_webhook``. So a Volcano Job task refuses an env var named ``1F1B_SCHEDULE`` (strict
names) that a Deployment admits.
"""
from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class PodValidationOptions:
    """The options this port models; the field names are upstream's, in snake case."""

    # IsRelaxedEnvVarName (printable ASCII but '=') instead of IsEnvVarName for env and envFrom prefixes.
    allow_relaxed_environment_variable_validation: bool = False
    # Namespaced sysctls (net.*, the IPC ones) admitted on a pod sharing the host's network or IPC.
    allow_namespaced_sysctls_for_host_net_and_host_ipc: bool = False
    # A controller.kubernetes.io/pod-deletion-cost annotation that is no int32 admitted.
    allow_invalid_pod_deletion_cost: bool = False
    # Hugepages amounts that are no whole multiple of their page size admitted.
    allow_indivisible_huge_pages_values: bool = False
    # spec.resources (pod-level requests and limits) validated (the PodLevelResources gate).
    pod_level_resources_enabled: bool = False
    # The spec is a Pod's own (not a template): an unset hostPort with hostNetwork is then refused.
    resource_is_pod: bool = False

    def for_pod(self) -> "PodValidationOptions":
        return replace(self, resource_is_pod=True)


# The v1.35 API server on create: RelaxedEnvironmentVariableValidation is GA, PodDeletionCost and
# PodLevelResources are on by default.
API_SERVER_CREATE = PodValidationOptions(allow_relaxed_environment_variable_validation=True,
                                         pod_level_resources_enabled=True)


def volcano_job_webhook(pod_level_resources: bool) -> PodValidationOptions:
    """What Volcano's job webhook passes for each task template: ``PodLevelResourcesEnabled`` from
    the webhook's own PodLevelResources gate, everything else off."""
    return PodValidationOptions(pod_level_resources_enabled=pod_level_resources)
