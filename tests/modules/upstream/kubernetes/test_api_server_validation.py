"""The API server's built-in validation (modules/upstream/kubernetes/): one object per check,
refused on the field and with the words the API server uses, and its valid twin admitted."""
from __future__ import annotations

import copy

import pytest

from modules.upstream.field import FieldError
from modules.upstream.kubernetes.core_pod import validate_pod_template
from modules.upstream.kubernetes.registry import validate_object


def _pairs(errors: list[FieldError]) -> list[tuple[str, str]]:
    return [error.problem() for error in errors]

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
       "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}]}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
              "spec": {"selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}
HPA = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h", "namespace": "d"},
       "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1, "maxReplicas": 4,
                "metrics": [{"type": "Resource", "resource": {
                    "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]}}


def _with(base: dict, path: str, value) -> dict:
    obj = copy.deepcopy(base)
    keys = path.split(".")
    node = obj
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(keys[-1])] = value
    else:
        node[keys[-1]] = value
    return obj


CASES = [
    # (object, field, message fragment)
    (_with(POD, "spec.containers.0.volumeMounts", [{"name": "data", "mountPath": "/d"}]),
     "spec.containers[0].volumeMounts[0].name", 'Not found: "data"'),
    (_with(POD, "spec.containers", [{"name": "a", "image": "x"}, {"name": "a", "image": "y"}]),
     "spec.containers[1].name", 'Duplicate value: "a"'),
    (_with(POD, "spec.containers.0.name", "App"), "spec.containers[0].name", "RFC 1123 label"),
    (_with(POD, "spec.containers.0.image", ""), "spec.containers[0].image", "Required value"),
    (_with(POD, "spec.volumes", [{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}]),
     "spec.volumes[1].name", 'Duplicate value: "v"'),
    (_with(POD, "spec.volumes", [{"name": "v", "emptyDir": {}, "hostPath": {"path": "/x"}}]),
     "spec.volumes[0].emptyDir", "may not specify more than 1 volume type"),   # upstream checks hostPath first
    (_with(POD, "spec.containers.0.ports", [{"containerPort": 70000}]),
     "spec.containers[0].ports[0].containerPort", "must be between 1 and 65535"),
    (_with(POD, "spec.containers.0.ports", [{"containerPort": 80, "protocol": "HTTP"}]),
     "spec.containers[0].ports[0].protocol", 'Unsupported value: "HTTP"'),
    (_with(POD, "spec.containers.0.ports", [{"containerPort": 80, "name": "web"},
                                            {"containerPort": 81, "name": "web"}]),
     "spec.containers[0].ports[1].name", 'Duplicate value: "web"'),
    (_with(POD, "spec.containers.0.env", [{"name": "A=B", "value": "1"}]),
     "spec.containers[0].env[0].name", "other than '='"),
    (_with(POD, "spec.containers.0.resources", {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
     "spec.containers[0].resources.requests", "must be less than or equal to cpu limit of 1"),
    (_with(POD, "spec.containers.0.resources", {"requests": {"nvidia.com/gpu": 8}}),
     "spec.containers[0].resources.limits", "Limit must be set for non overcommitable resources"),
    (_with(POD, "spec.containers.0.resources", {"requests": {"nvidia.com/gpu": 4}, "limits": {"nvidia.com/gpu": 8}}),
     "spec.containers[0].resources.requests", "must be equal to nvidia.com/gpu limit of 8"),
    (_with(POD, "spec.containers.0.livenessProbe", {"periodSeconds": 10}),
     "spec.containers[0].livenessProbe", "must specify a handler type"),
    (_with(POD, "spec.containers.0.livenessProbe", {"exec": {"command": ["true"]}, "tcpSocket": {"port": 80}}),
     "spec.containers[0].livenessProbe.tcpSocket", "may not specify more than 1 handler type"),
    (_with(POD, "spec.containers.0.livenessProbe", {"exec": {"command": ["true"]}, "successThreshold": 2}),
     "spec.containers[0].livenessProbe.successThreshold", "must be 1"),
    (_with(POD, "spec.restartPolicy", "Sometimes"), "spec.restartPolicy", 'Unsupported value: "Sometimes"'),
    (_with(DEPLOYMENT, "spec.template.spec.restartPolicy", "Never"), "spec.template.spec.restartPolicy",
     'supported values: "Always"'),
    ({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "d"},
      "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}},
     "spec.template.spec.restartPolicy", 'Unsupported value: "Always": supported values: "OnFailure", "Never"'),
    (_with(POD, "metadata.labels", {"app": "has space"}), "metadata.labels", "a valid label must be"),
    (_with(POD, "metadata.annotations", {"big": "x" * (256 * 1024)}), "metadata.annotations",
     "Too long: may not be more than 262144 bytes"),
    (_with(POD, "metadata.name", "Web"), "metadata.name", "RFC 1123 subdomain"),
    (_with(HPA, "spec.minReplicas", 0), "spec.minReplicas", "Invalid value: 0: must be greater than or equal to 1"),
    (_with(HPA, "spec.maxReplicas", 0), "spec.maxReplicas", "must be greater than 0"),
    (_with(HPA, "spec.minReplicas", 5), "spec.maxReplicas", "must be greater than or equal to `minReplicas`"),
    (_with(HPA, "spec.metrics", [{"type": "Pods", "resource": {"name": "cpu"}}]), "spec.metrics[0].pods",
     "must populate information for the given metric source"),
    (_with(HPA, "spec.metrics", [{"type": "Pods", "pods": {"metric": {"name": "q"},
                                                            "target": {"type": "AverageValue"}}}]),
     "spec.metrics[0].pods.target.averageValue", "must specify a positive target averageValue"),
    (_with(HPA, "spec.behavior", {"scaleDown": {"stabilizationWindowSeconds": 7200}}),
     "spec.behavior.scaleDown.stabilizationWindowSeconds", "must be less than or equal to 3600"),
    ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c", "namespace": "d"},
      "spec": {"resources": {"requests": {"storage": "1Gi"}}}}, "spec.accessModes", "at least 1 access mode"),
    ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c", "namespace": "d"},
      "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "0"}}}},
     "spec.resources[storage]", "must be greater than zero"),
    ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "d"},
      "spec": {"ports": [{"port": 80}, {"port": 81}]}}, "spec.ports[0].name", "Required value"),
    ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "d"},
      "spec": {"type": "NodePort", "clusterIP": "None", "ports": [{"port": 80}]}}, "spec.clusterIPs[0]",
     "may not be set to 'None' for NodePort services"),
    ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1svc", "namespace": "d"},
      "spec": {"ports": [{"port": 80}]}}, "metadata.name", "DNS-1035 label"),
    ({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "system-high"}, "value": 10},
     "metadata.name", "reserved for system use only"),
    ({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "huge"}, "value": 2000000000},
     "value", "maximum allowed value of a user defined priority is 1000000000"),
    ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "d"}, "data": {"a b": "1"}},
     "data[a b]", "a valid config key"),
    ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "d"},
      "data": {"a": "x" * ((1 << 20) + 1)}},
     "", "Too long: may not be more than 1048576 bytes"),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "nas"},
      "provisioner": "nas.csi.example.com", "reclaimPolicy": "Keep"}, "reclaimPolicy", 'Unsupported value: "Keep"'),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "nas"}},
     "provisioner", "Required value"),
    ({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "d"},
      "rules": [{"apiGroups": [""], "resources": ["pods"]}]},
     "rules[0].verbs", "verbs must contain at least one value"),
    ({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "d"},
      "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}, "rules[0].nonResourceURLs",
     "namespaced rules cannot apply to non-resource URLs"),
    ({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "b"},
      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
      "subjects": [{"kind": "ServiceAccount", "name": "sa"}]}, "roleRef.kind", 'supported values: "ClusterRole"'),
    ({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "b"},
      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
      "subjects": [{"kind": "ServiceAccount", "name": "sa"}]}, "subjects[0].namespace", "Required value"),
    ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "Team_A"}},
     "metadata.namespace", "RFC 1123 label"),
    # scheduling constraints, DNS and the downward API of a pod spec
    (_with(POD, "spec.tolerations", [{"key": "gpu", "operator": "Exists", "value": "yes"}]),
     "spec.tolerations[0].operator", "value must be empty when `operator` is 'Exists'"),
    (_with(POD, "spec.tolerations", [{"operator": "Equal", "value": "x"}]),
     "spec.tolerations[0].operator", "operator must be Exists when `key` is empty"),
    (_with(POD, "spec.tolerations", [{"key": "k", "operator": "Exists", "tolerationSeconds": 5}]),
     "spec.tolerations[0].effect", "effect must be 'NoExecute' when `tolerationSeconds` is set"),
    (_with(POD, "spec.tolerations", [{"key": "k", "operator": "Lt", "value": "3"}]),
     "spec.tolerations[0].operator", 'Unsupported value: "Lt"'),
    (_with(POD, "spec.affinity", {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": []}}}),
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
     "must have at least one node selector term"),
    (_with(POD, "spec.affinity", {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Exists", "values": ["a"]}]}]}}}),
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
     ".matchExpressions[0].values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
    (_with(POD, "spec.affinity", {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"}}]}}),
     "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
     "must be in the range 1-100"),
    (_with(POD, "spec.affinity", {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{}]}}),
     "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey", "can not be empty"),
    (_with(POD, "spec.topologySpreadConstraints", [{"maxSkew": 1, "topologyKey": "zone",
                                                   "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}]),
     "spec.topologySpreadConstraints[0].minDomains", "can only use minDomains if whenUnsatisfiable=DoNotSchedule"),
    (_with(POD, "spec.dnsPolicy", "None"), "spec.dnsConfig", "must provide `dnsConfig` when `dnsPolicy` is None"),
    (_with(POD, "spec.containers.0.env", [{"name": "L", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels"}}}]),
     "spec.containers[0].env[0].valueFrom.fieldRef.fieldPath", 'Unsupported value: "metadata.labels"'),
    (_with(POD, "spec.containers.0.env", [{"name": "G", "valueFrom": {"resourceFieldRef": {
        "resource": "requests.nvidia.com/gpu"}}}]),
     "spec.containers[0].env[0].valueFrom.resourceFieldRef.resource", 'Unsupported value: "requests.nvidia.com/gpu"'),
    (_with(POD, "spec.containers.0.resources", {"limits": {"rdma/ib": "1.5"}}),
     "spec.containers[0].resources.limits[rdma/ib]", "must be an integer"),
    (_with(_with(POD, "spec.hostNetwork", True), "spec.containers.0.ports", [{"containerPort": 80, "hostPort": 8080}]),
     "spec.containers[0].ports[0].hostPort", "must match `containerPort` when `hostNetwork` is true"),
    # the workload controllers' own spec
    (_with(DEPLOYMENT, "spec.selector", {"matchExpressions": [{"key": "app", "operator": "In", "values": ["api"]}]}),
     "spec.template.metadata.labels", "`selector` does not match template `labels`"),
    (_with(DEPLOYMENT, "spec.selector", {}), "spec.selector", "empty selector is invalid for deployment"),
    (_with(DEPLOYMENT, "spec.strategy", {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}),
     "spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"),
    (_with(DEPLOYMENT, "spec.strategy", {"rollingUpdate": {"maxSurge": "0%", "maxUnavailable": 0}}),
     "spec.strategy.rollingUpdate.maxUnavailable", "may not be 0 when `maxSurge` is 0"),
    ({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "d"},
      "spec": {"completionMode": "Indexed", "template": {"spec": {"restartPolicy": "Never", "containers": [
          {"name": "a", "image": "x"}]}}}}, "spec.completions", "Required value: when completion mode is Indexed"),
]


@pytest.mark.parametrize("obj, path, fragment", CASES, ids=[f"{c[0]['kind']}:{c[1]}:{i}" for i, c in enumerate(CASES)])
def test_refused_on_the_field_with_the_api_servers_words(obj, path, fragment):
    problems = _pairs(validate_object(obj))
    assert any(p == path and fragment in m for p, m in problems), problems


@pytest.mark.parametrize("obj", [POD, DEPLOYMENT, HPA], ids=["pod", "deployment", "hpa"])
def test_valid_objects_are_admitted(obj):
    assert validate_object(obj) == []


ADMITTED_TWINS = [
    _with(POD, "spec.tolerations", [{"operator": "Exists"}, {"key": "k", "operator": "Exists", "effect": "NoExecute",
                                                            "tolerationSeconds": 30}, {"key": "gpu", "value": "a"}]),
    _with(POD, "spec.affinity", {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}),
    _with(POD, "spec.containers.0.env", [
        {"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
        {"name": "B", "valueFrom": {"resourceFieldRef": {"resource": "limits.hugepages-2Mi"}}},
        {"name": "C", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}}]),
    _with(_with(POD, "spec.dnsPolicy", "None"), "spec.dnsConfig", {"nameservers": ["10.0.0.10"]}),
    _with(DEPLOYMENT, "spec.strategy", {"rollingUpdate": {"maxSurge": 0}}),     # maxUnavailable defaults to 25%
    _with(DEPLOYMENT, "spec.selector", {"matchExpressions": [{"key": "app", "operator": "Exists"}]}),
    _with(_with(POD, "spec.hostNetwork", True), "spec.containers.0.ports", [{"containerPort": 80}]),  # defaulted
    # a StatefulSet's pod spec is not validated: its mounts may name a volumeClaimTemplate
    _with(_with(DEPLOYMENT, "kind", "StatefulSet"), "spec.template.spec.containers.0.volumeMounts",
          [{"name": "data", "mountPath": "/data"}]),
]


@pytest.mark.parametrize("schedule, error", [
    ("0 2 * * *", None), ("@every 1h30m", None), ("*/5 8-18 * jan-dec MON-FRI", None), ("@daily", None),
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("0 0 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("0 5-2 * * *", "beginning of range (5) beyond end of range (2): 5-2"),
    ("0 2 * *", "expected exactly 5 fields, found 4: [0 2 * *]"),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
])
def test_cron_schedules_are_judged_as_robfig_cron_parses_them(schedule, error):
    from modules.upstream.kubernetes.batch import cron_schedule_error

    assert cron_schedule_error(schedule) == error


def test_a_claim_restored_from_a_data_source_still_needs_a_storage_request():
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c", "namespace": "d"},
           "spec": {"accessModes": ["ReadWriteOnce"], "dataSource": {"kind": "PersistentVolumeClaim", "name": "src"}}}
    assert _pairs(validate_object(pvc)) == [("spec.resources[storage]", "Required value")]


@pytest.mark.parametrize("obj", ADMITTED_TWINS, ids=range(len(ADMITTED_TWINS)))
def test_the_new_checks_admit_their_valid_twins(obj):
    assert validate_object(obj) == []


def test_scale_to_zero_needs_the_gate_and_an_object_or_external_metric():
    zero = _with(HPA, "spec.minReplicas", 0)
    assert _pairs(validate_object(zero, {"HPAScaleToZero"})) == [
        ("spec.metrics", "Forbidden: must specify at least one Object or External metric to support scaling to zero "
                         "replicas")]
    external = _with(zero, "spec.metrics", [{"type": "External", "external": {
        "metric": {"name": "queue_depth"}, "target": {"type": "AverageValue", "averageValue": "30"}}}])
    assert validate_object(external, {"HPAScaleToZero"}) == []
    assert validate_object(external) and validate_object(external)[0].field == "spec.minReplicas"


def test_pod_template_paths_start_where_the_caller_says():
    mount = {"name": "v", "mountPath": "/v"}
    template = {"spec": {"containers": [{"name": "w", "image": "x", "volumeMounts": [mount]}]}}
    assert _pairs(validate_pod_template(template, "spec.tasks[2].template")) == [
        ("spec.tasks[2].template.spec.containers[0].volumeMounts[0].name", 'Not found: "v"')]
    template["spec"]["volumes"] = [{"name": "v"}]   # no source: the API server defaults it to an emptyDir
    assert validate_pod_template(template, "spec.tasks[2].template") == []


def test_a_cluster_scoped_objects_namespace_is_cleared_not_refused():
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
             "metadata": {"name": "q", "namespace": "x"}}
    assert validate_object(queue) == []


def test_odd_shapes_are_reported_as_the_api_server_reports_missing_fields():
    """A template or object of the wrong shape is read as absent: the required fields it lacks are
    reported at their paths, as the API server reports them, never raised."""
    for odd in (None, 3, "x", [1], {"spec": "x"}, {"spec": {"containers": "x"}}):
        errors = validate_pod_template(odd, "t")   # type: ignore[arg-type]
        assert [e.error() for e in errors] == ["t.spec.containers: Required value"], odd
    for odd in (None, 3, "x", [1], {"spec": "x"}):
        pod = validate_object({"apiVersion": "v1", "kind": "Pod", "metadata": odd, "spec": odd})
        assert [e.error() for e in pod] == ["metadata.name: Required value: name or generateName is required",
                                           "spec.containers: Required value"], odd
    odd = {"spec": {"containers": "x", "volumes": [None, 2]}}
    assert [e.error() for e in validate_pod_template(odd, "t")] == [   # type: ignore[arg-type]
        "t.spec.volumes[0].name: Required value", "t.spec.volumes[1].name: Required value",
        "t.spec.containers: Required value"]
