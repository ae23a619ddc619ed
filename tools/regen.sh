#!/bin/sh
# Regenerates every checked-in generated file from the code: shell
# completions (completions/), the man page (man/kubectl-fleet.1), the CRD
# YAML (deploy/crds/), the alert rules and dashboard (deploy/monitoring/),
# the kustomize bases (deploy/kustomize/) and the krew manifest template
# (krew-manifest.yaml).
# They are written by the repository's build tool (xtask/, `cargo xtask
# regen`), which is not part of the shipped binaries; its tests fail when
# the checked-in copies are stale.
set -eu
cd "$(dirname "$0")/.."
# deploy/kustomize/ holds generated files only: none of an old layout lingers.
rm -rf deploy/kustomize
cargo xtask regen .
git status --short -- completions man deploy/crds deploy/monitoring deploy/kustomize krew-manifest.yaml
