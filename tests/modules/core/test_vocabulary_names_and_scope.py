"""The one Kubernetes vocabulary: apimachinery v0.35's name formats with upstream's whole messages, and
object scope as the v1.35 API server has it (a cluster-scoped object's namespace is cleared, not judged;
each kind's name in its own format)."""
from __future__ import annotations

import pytest

from modules.upstream.kubernetes.registry import validate_object
from modules.core.vocabulary import names
from modules.core.vocabulary.scope import BUILTIN_CLUSTER_SCOPED, is_cluster_scoped

_LABEL_KEY_REGEX = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
                    "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


@pytest.mark.parametrize("check, value, messages", [
    (names.dns1123_label, "a.b", ["must not contain dots"]),
    (names.dns1123_label, "A", ["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
                                "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
                                "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
    (names.dns1123_label, "a" * 64, ["must be no more than 63 characters"]),
    (names.qualified_name, "a/b/c", ["a valid label key " + _LABEL_KEY_REGEX + " with an optional DNS subdomain "
                                                                               "prefix and '/' (e.g. "
                                                                               "'example.com/MyName')"]),
    (names.qualified_name, "example.com/", ["name part must be non-empty", "name part " + _LABEL_KEY_REGEX]),
    (names.qualified_name, "/a", ["prefix part must be non-empty"]),
    (names.qualified_name, "a" * 64, ["name part must be no more than 63 bytes"]),
    (names.label_value, "é", ["a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
                              "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
                              "'my_value',  or '12345', regex used for validation is "
                              "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]),
    (names.env_var_name, "", ["environment variable name must be non-empty"]),
    (names.env_var_name, "1F1B_SCHEDULE", []),
    (names.strict_env_var_name, "1F1B_SCHEDULE", [
        "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must "
        "not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation "
        "is '[-._a-zA-Z][-._a-zA-Z0-9]*')"]),
    (names.strict_env_var_name, "..a", ["must not start with '..'"]),
    (names.c_identifier, "my_name", []),
    (names.config_map_key, "..", ["must not be '..'"]),
    (names.path_segment_name, "Alice_CSR", []),
    (names.path_segment_name, "a/b%", ["may not contain '/'", "may not contain '%'"]),
    (names.ip_address, "2001:db8::1", []),
    (names.ip_address, "2001:DB8::1", ['must be in canonical form ("2001:db8::1")']),
    (names.ip_address, "010.0.0.1", ["must not have leading 0s"]),
    (names.ip_address, "::ffff:1.2.3.4", ["must not be an IPv4-mapped IPv6 address"]),
    (names.ip_address, "db", ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]),
])
def test_name_formats_give_apimachinerys_whole_messages(check, value, messages):
    assert check(value) == messages


def _obj(api_version: str, kind: str, name: str, namespace: str | None = None) -> dict:
    md = {"name": name} | ({"namespace": namespace} if namespace is not None else {})
    return {"apiVersion": api_version, "kind": kind, "metadata": md}


@pytest.mark.parametrize("obj", [
    _obj("node.k8s.io/v1", "RuntimeClass", "nvidia", "Not_A_Namespace"),
    _obj("scheduling.volcano.sh/v1beta1", "Queue", "q", "x_y"),
    _obj("certificates.k8s.io/v1", "CertificateSigningRequest", "Alice_CSR"),
    _obj("networking.k8s.io/v1", "IPAddress", "2001:db8::1"),
    _obj("rbac.authorization.k8s.io/v1", "ClusterRole", "system:controller:Foo"),
])
def test_objects_the_api_server_admits_by_name_and_scope(obj):
    assert validate_object(obj) == []


@pytest.mark.parametrize("obj, field, message", [
    (_obj("v1", "ConfigMap", "c", "Not_A_Namespace"), "metadata.namespace",
     'Invalid value: "Not_A_Namespace": a lowercase RFC 1123 label'),
    (_obj("networking.k8s.io/v1", "IPAddress", "2001:DB8::1"), "metadata.name",
     'Invalid value: "2001:DB8::1": must be in canonical form ("2001:db8::1")'),
    (_obj("certificates.k8s.io/v1", "CertificateSigningRequest", "a/b"), "metadata.name",
     "Invalid value: \"a/b\": may not contain '/'"),
    (_obj("v1", "Namespace", "a.b"), "metadata.name", 'Invalid value: "a.b": must not contain dots'),
    (_obj("apps/v1", "StatefulSet", "db.v2", "default"), "metadata.name",
     'Invalid value: "db.v2": must not contain dots'),
])
def test_names_and_namespaces_refused_in_their_kinds_format(obj, field, message):
    errors = [e for e in validate_object(obj) if e.field.startswith("metadata.")]   # bodies left out here
    assert [e.field for e in errors] == [field]
    assert errors[0].message().startswith(message)


def test_scope_knows_the_builtin_cluster_scoped_kinds_by_group():
    assert ("node.k8s.io", "RuntimeClass") in BUILTIN_CLUSTER_SCOPED
    assert ("networking.k8s.io", "IPAddress") in BUILTIN_CLUSTER_SCOPED
    assert is_cluster_scoped({"apiVersion": "v1", "kind": "PersistentVolume"})
    # a kind of the same name in another group is not the built-in one
    assert not is_cluster_scoped({"apiVersion": "example.com/v1", "kind": "Node"})
    assert not is_cluster_scoped({"apiVersion": "v1", "kind": "PersistentVolumeClaim"})
