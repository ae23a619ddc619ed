#!/usr/bin/env bash
# Prints a directory holding `skopeo` and `docker-registry` from Debian's
# packages (skopeo, libgpgme11, docker-registry): downloaded once with
# apt-get and unpacked with dpkg-deb into a cache outside the work tree.
# Nothing is installed system-wide and no service is started; `skopeo` is a
# wrapper that finds the unpacked libgpgme and passes a trust policy that
# accepts any image (the tests push and pull only images they built).
#   bash tools/image/tools.sh   # cache: ${IMAGE_TOOLS_CACHE:-$HOME/.cache/kubectl-fleet-image-tools}
# tools/test.sh exports the result as FLEET_IMAGE_TOOLS for
# tests/operator_image.rs and tests/release.rs (docs/image.md).
set -euo pipefail
readonly PKGS="skopeo libgpgme11 docker-registry"
cache="${IMAGE_TOOLS_CACHE:-${HOME:-/root}/.cache/kubectl-fleet-image-tools}"
root="$cache/root"
bin="$cache/bin"
die() { echo "image tools: $*" >&2; exit 1; }

if [ ! -x "$root/usr/bin/skopeo" ] || [ ! -x "$root/usr/bin/docker-registry" ]; then
  for tool in apt-get dpkg-deb; do
    command -v "$tool" >/dev/null || die "'$tool' not found (needs a Debian-based machine)"
  done
  rm -rf "$cache/debs" "$root"
  mkdir -p "$cache/debs"
  # shellcheck disable=SC2086
  if ! (cd "$cache/debs" && apt-get download -q $PKGS >&2); then
    echo "image tools: apt lists missing or stale; running apt-get update" >&2
    apt-get update -q >&2
    # shellcheck disable=SC2086
    (cd "$cache/debs" && apt-get download -q $PKGS >&2) || die "apt-get download $PKGS failed"
  fi
  for deb in "$cache"/debs/*.deb; do
    dpkg-deb -x "$deb" "$root"
  done
fi

mkdir -p "$bin"
lib="$root/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"
printf '%s\n' '{"default": [{"type": "insecureAcceptAnything"}]}' > "$cache/policy.json"
cat > "$bin/skopeo.tmp" <<WRAPPER
#!/bin/sh
# Debian's skopeo unpacked by tools/image/tools.sh (not installed system-wide).
LD_LIBRARY_PATH="$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$root/usr/bin/skopeo" --policy "$cache/policy.json" "\$@"
WRAPPER
chmod 0755 "$bin/skopeo.tmp"
mv -f "$bin/skopeo.tmp" "$bin/skopeo"
ln -sf "$root/usr/bin/docker-registry" "$bin/docker-registry"
"$bin/skopeo" --version >/dev/null 2>&1 || die "$bin/skopeo does not run"
echo "$bin"
