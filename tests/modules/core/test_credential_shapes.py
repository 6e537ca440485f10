"""Credential shapes added in the third hostile-input round, each with the look-alikes it must not flag."""
from __future__ import annotations

import base64

import pytest

from modules.core.secrets import credential_in, find_credentials, redact_shapes
from policies.framework import CheckContext
from policies.rules.security import _no_secrets

PW = "hunter2pw"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


SHAPES = [
    (f"mysql -h db -u root -p{PW}", "a password on a command line",
     ["mysql -u root -p", "mysql -P 3306 -h db", "mysql -p$MYSQL_PWD"]),
    (f"docker login -u me -p {PW} registry.io", "a password on a command line",
     ["docker login -u me --password-stdin", "docker login -p \"$PW\""]),
    (f"sshpass -p {PW} ssh host", "a password on a command line", ["sshpass -f /etc/pw ssh h", "sshpass -e ssh h"]),
    (f"redis-cli -h r -a {PW} ping", "a password on a command line", ['redis-cli -a "$REDIS_PASSWORD"']),
    ('cfg={"password": "' + PW + '"}', "a credential in JSON",
     ['{"password": "${DB}"}', '{"token": "true"}', '{"passwordFile": "/etc/pw"}']),
    (f"https://b.s3.amazonaws.com/k?X-Amz-Signature={PW}0123456789abcdef", "a presigned URL",
     ["https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"]),
    (f"https://storage.googleapis.com/o?X-Goog-Signature={PW}0123456789abcdef", "a presigned URL", []),
    ("client-key-data: " + b64("-----BEGIN RSA PRIVATE KEY-----"), "a kubeconfig client key",
     ["certificate-authority-data: " + b64("-----BEGIN CERTIFICATE-----")]),
    ('{"auths": {"r.io": {"auth": "' + b64(f"u:{PW}") + '"}}}', "a credential in JSON", ['{"auth": "none"}']),
    ("_auth=" + b64(f"u:{PW}"), "a credential in a variable assignment", ["_authToken=${NPM_TOKEN}"]),
    (f"X-API-Key: {PW}xyz", "an API key header", ["X-API-Key: $KEY", "X-API-Key: ${KEY}"]),
    (f"PRIVATE-TOKEN: {PW}xyz", "an API key header", ["PRIVATE-TOKEN: $CI_TOKEN"]),
    ("admin:$apr1$abcdefgh$" + "b" * 22, "an htpasswd line", ["admin:x", "time: 12:30"]),
    ("PuTTY-User-Key-File-3: ssh-ed25519", "a PuTTY private key", ["putty is a terminal"]),
    (f"password%3D{PW}", "a URL-encoded credential", ["password%3D%24PW", "a%3Db"]),
    (f"https%3A%2F%2Fuser%3A{PW}%40host", "a URL-encoded credential", ["https%3A%2F%2Fhost%2Fx"]),
    (f"alice:{PW}@gitserver/x.git", "credentials in an address",
     ["git@github.com:org/repo.git", "nginx:1.25@sha256:0123", "a:b@c", "user@host:path/x.git"]),
    (b64("-----BEGIN OPENSSH PRIVATE KEY-----\nx"), "a base64-encoded credential",
     [b64("-----BEGIN CERTIFICATE-----\nx"), b64('{"kind": "Config"}')]),
    (b64('{"auths": {"r": {"auth": "x"}}}'), "a base64-encoded credential", []),
    (f"DB_PASS={PW}", "a credential in a variable assignment", ["DB_PASS=$(cat /run/pw)", "BYPASS=1"]),
    (f"export SIGNING_KEY={PW}", "a credential in a variable assignment", ["SIGNING_KEY_FILE=/etc/key"]),
]


@pytest.mark.parametrize("text, what, look_alikes", SHAPES, ids=[f"{w}-{i}" for i, (_, w, _) in enumerate(SHAPES)])
def test_a_shape_is_caught_and_its_look_alikes_are_not(text, what, look_alikes):
    assert credential_in(text) == what
    assert PW not in redact_shapes(f"job args: {text}")
    for other in look_alikes:
        assert credential_in(other) is None, other


@pytest.mark.parametrize("name", ["DB_PASS", "SIGNING_KEY", "ENCRYPTION_KEY", "SESSION_KEY", "MASTER_KEY",
                                  "REDIS_AUTH", "AUTH_HEADER"])
def test_secret_variable_names_are_literal_values(name):
    assert list(find_credentials({"env": [{"name": name, "value": PW}]})) == [
        ("env[0].value", f"a literal value for {name!r}")]


@pytest.mark.parametrize("name", ["auth", "bypass", "PASS_COUNT", "signingKeyRef", "SESSION_KEY_FILE"])
def test_look_alike_names_are_not(name):
    assert list(find_credentials({"env": [{"name": name, "value": "x1"}]})) == []


def _configmap(data: dict, annotations: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "ml", "annotations": annotations or {}}, "data": data}


def _paths(obj: dict) -> list[str]:
    return [f.path for f in _no_secrets(obj, CheckContext())]


def test_configmap_metadata_is_scanned():
    obj = _configmap({}, {"note": "ghp_" + "Zq9" * 12, "key": "-----BEGIN RSA PRIVATE KEY-----", "ok": "plain"})
    assert sorted(_paths(obj)) == ["metadata.annotations.key", "metadata.annotations.note"]


@pytest.mark.parametrize("text", [f"db:\n  password: {PW}\n", f"users:\n- name: u\n  user:\n    token: {PW}\n"],
                         ids=["nested-password", "kubeconfig-token"])
def test_nested_secret_lines_in_configmap_data_are_found(text):
    assert _paths(_configmap({"app.yaml": text})) == ["data.app.yaml"]


def test_a_key_alone_on_its_line_does_not_take_the_next_line_as_its_value():
    text = "token:\n  path: /var/run/token\npassword:\n  file: /etc/pw\ndb:\n  host: db.example.com\n"
    assert _paths(_configmap({"app.yaml": text})) == []
