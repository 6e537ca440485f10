#!/bin/sh
# promtool checks and unit-tests the alert rules; Debian's `prometheus` package ships it.
# Where it cannot be installed (no apt-get, not root and no passwordless sudo, or the install
# fails) this says why and exits 0: the promtool tests then skip with their own reason.
if command -v promtool >/dev/null 2>&1; then
  exit 0
fi
skip() {
  echo "promtool: not installed ($1); the promtool tests will be skipped"
  exit 0
}
command -v apt-get >/dev/null 2>&1 || skip "apt-get not found: install Prometheus's promtool by hand to run them"
if [ "$(id -u)" = 0 ]; then
  SUDO=
elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
  SUDO="sudo -n"
else
  skip "not root and no passwordless sudo for apt-get"
fi
echo "installing promtool (Debian package prometheus)"
$SUDO apt-get update -qq || skip "apt-get update failed"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq prometheus >/dev/null || skip "apt-get install prometheus failed"
