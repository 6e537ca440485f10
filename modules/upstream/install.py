"""What the cluster runs of Volcano's admission: which webhooks the chart registers, in which
namespace the release lives (the webhooks' namespaceSelector leaves it out), and whether the chart
installs its ValidatingAdmissionPolicies and MutatingAdmissionPolicies.

Read from the Volcano chart release among the checked objects (``custom.admission_enable``,
``custom.enabled_admissions``, ``custom.vap_enable``: the stack option ``vapEnable`` renders it;
``custom.map_enable``, which installs the chart's MutatingAdmissionPolicies); without a release, the
v1.15.1 chart's defaults are assumed, and ``Install.assumed`` says so.

volcano-sh/volcano v1.15.1 ``installer/helm/chart/volcano/values.yaml``: ``admission_enable: true``,
``vap_enable: false``, ``map_enable: false``, ``enabled_admissions`` without ``/jobflows/validate``, ``/pods/validate``,
``/pods/mutate`` and ``/podgroups/mutate``. ``templates/webhooks.yaml``: every namespaced webhook
carries ``namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn,
values: [<release namespace>, kube-system]}]}`` and an empty objectSelector; the HyperNode webhook
(cluster-scoped kind) has no selector. ``templates/mutating_admission_policy.yaml`` installs the four
``policy/*-mutating.yaml`` MutatingAdmissionPolicies only ``if .Values.custom.map_enable``, as
``templates/validating_admission_policy.yaml`` installs the VAPs only with ``vap_enable``.
"""
from __future__ import annotations

from dataclasses import dataclass

from modules.semantics.scheduler_conf import is_volcano_release, release_values
from modules.semantics.shapes import as_dict, meta

CHART = "the Volcano v1.15.1 chart's defaults"
CHART_DEFAULT_ADMISSIONS = frozenset({"/jobs/mutate", "/jobs/validate", "/podgroups/validate", "/queues/mutate",
                                      "/queues/validate", "/hypernodes/validate", "/cronjobs/validate"})
DEFAULT_NAMESPACE = "volcano-system"   # where the chart's documentation installs it
SYSTEM_NAMESPACE = "kube-system"


@dataclass(frozen=True)
class Install:
    """Volcano's admission as installed: the webhooks registered (``admissions``: the chart's
    ``enabled_admissions`` paths; None registers every webhook, as upstream's test tables call each
    function directly), the release namespace, and whether the chart installs its validating
    (``vap``) and mutating (``map``) admission policies."""

    admissions: frozenset[str] | None = CHART_DEFAULT_ADMISSIONS
    namespace: str = DEFAULT_NAMESPACE
    vap: bool = False
    map: bool = False
    assumed: str = ""   # non-empty when no release was read: the install that was assumed

    def registers(self, admission: str | None) -> bool:
        """Whether the webhook behind the chart entry ``admission`` is registered (None: a check
        that is always on, such as the API server's own validation)."""
        return admission is None or self.admissions is None or admission in self.admissions

    def selects(self, namespace: object) -> bool:
        """The chart's namespaceSelector: an object in the release namespace or in kube-system is
        not sent to Volcano's namespaced webhooks (the table runner's install selects every one)."""
        if self.admissions is None:
            return True
        return namespace not in (self.namespace, SYSTEM_NAMESPACE)


EVERY_WEBHOOK = Install(admissions=None, vap=True, map=True)
CHART_DEFAULTS = Install(assumed=CHART)


def install_of(manifests: list[dict]) -> Install:
    """The install the Volcano chart release among ``manifests`` makes (the first release); without
    one, the chart's defaults (``Install.assumed`` names them)."""
    for obj in manifests:
        if is_volcano_release(obj):
            custom = as_dict(release_values(obj).get("custom"))
            namespace = meta(obj).get("namespace")
            namespace = namespace if isinstance(namespace, str) and namespace else DEFAULT_NAMESPACE
            listed = custom.get("enabled_admissions")
            if custom.get("admission_enable") is False:
                admissions: frozenset[str] = frozenset()
            elif isinstance(listed, str):
                admissions = frozenset(p.strip() for p in listed.split(",") if p.strip())
            else:
                admissions = CHART_DEFAULT_ADMISSIONS
            return Install(admissions, namespace, custom.get("vap_enable") is True,
                           map=custom.get("map_enable") is True)
    return CHART_DEFAULTS
