#!/usr/bin/env bash
# Installs Debian's `prometheus` (prometheus, promtool) and
# `prometheus-alertmanager` (prometheus-alertmanager, amtool) with apt-get
# when missing, and prints where the four tools are, one KEY=PATH a line:
#   PROMTOOL=… PROMETHEUS=… ALERTMANAGER=… AMTOOL=…
# tools/test.sh exports them for the alert tests (tests/monitoring_rules.rs,
# tests/migrating_alerts.rs, tests/alerts_live.rs).
#
# Installed as packages, not unpacked: Alertmanager reads its default
# notification template from /usr/share/prometheus/alertmanager/, which
# only the package puts there. Their services are not started: the
# packages' maintainer scripts ask policy-rc.d, which says no while this
# script installs (it leaves an existing policy-rc.d as it is).
set -euo pipefail

missing=()
{ command -v prometheus && command -v promtool; } >/dev/null 2>&1 || missing+=(prometheus)
{ command -v prometheus-alertmanager && command -v amtool; } >/dev/null 2>&1 || missing+=(prometheus-alertmanager)
if [ "${#missing[@]}" -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 \
    || { echo "promtool.sh: ${missing[*]} missing and no apt-get (needs a Debian-based machine)" >&2; exit 1; }
  echo "${missing[*]} missing: installing with apt-get (services not started)" >&2
  policy=/usr/sbin/policy-rc.d
  made_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# tools/promtool.sh: no service starts while it installs\nexit 101\n' > "$policy"
    chmod 755 "$policy"
    made_policy=1
  fi
  cleanup() { if [ -n "$made_policy" ]; then rm -f "$policy"; fi; }
  trap cleanup EXIT
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

for tool in promtool prometheus prometheus-alertmanager amtool; do
  "$tool" --version >/dev/null 2>&1 || { echo "promtool.sh: $tool does not run" >&2; exit 1; }
done
echo "PROMTOOL=$(command -v promtool)"
echo "PROMETHEUS=$(command -v prometheus)"
echo "ALERTMANAGER=$(command -v prometheus-alertmanager)"
echo "AMTOOL=$(command -v amtool)"
