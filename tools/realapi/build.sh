#!/usr/bin/env bash
# Builds a real Kubernetes API server (apiextensions-apiserver: CRDs and custom
# resources only) plus etcd from Debian's packaged Go sources, fully offline
# after the download, into a cache folder outside the work tree.
#
#   tools/realapi/build.sh            # cache: ${REALAPI_CACHE:-$HOME/.cache/kubectl-fleet-realapi}
#
# Result: $CACHE/bin/fleet-realapi-server-KEY and $CACHE/bin/etcd. Every
# phase leaves a stamp file, so a second run only redoes what changed (the Go
# build is keyed on a hash of main.go, this script and the package set; see
# lib.sh).
set -euo pipefail

readonly GO_PKG="golang-1.27-go"
readonly GO_SRC_PKG="golang-1.27-src"
readonly GOROOT_REL="usr/lib/go-1.27"
readonly ROOT_PKG="golang-k8s-apiextensions-apiserver-dev"
readonly SUITES="trixie sid"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/realapi/lib.sh
. "$here/lib.sh"
cache="$(realapi_cache)"
apt_dir="$cache/apt"
debs="$cache/debs"
root="$cache/root"
stamps="$cache/stamps"
bin="$cache/bin"

die() { echo "realapi build: error: $*" >&2; exit 1; }
log() { echo "realapi build: $*" >&2; }

phase_start=0
phase() { phase_name="$1"; phase_start=$(date +%s); log "phase $phase_name ..."; }
phase_done() { log "phase $phase_name took $(( $(date +%s) - phase_start ))s"; }

for tool in apt-get apt-cache dpkg-deb sha256sum awk; do
  command -v "$tool" >/dev/null || die "'$tool' not found (this script needs a Debian-based machine)"
done

mkdir -p "$apt_dir/preferences.d" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$debs" "$root" "$stamps" "$bin"

# The mirror this machine already uses: first http(s) URI of a Debian archive
# (not -security) in the system's apt sources, deb822 or one-line format.
find_mirror() {
  local f uri
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    uri=$(awk '/^[Uu][Rr][Ii][Ss]:/ { for (i = 2; i <= NF; i++) print $i }' "$f" \
      | grep -E '^https?://' | grep -Ev 'security' | grep -E '/debian/?$' | head -n1 || true)
    [ -n "$uri" ] && { echo "${uri%/}"; return 0; }
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\//) { print $i; break } }' "$f" \
      | grep -Ev 'security' | grep -E '/debian/?$' | head -n1 || true)
    [ -n "$uri" ] && { echo "${uri%/}"; return 0; }
  done
  return 1
}

mirror="${REALAPI_DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror="$(find_mirror)" || die "no Debian mirror found in /etc/apt/sources.list*; set REALAPI_DEBIAN_MIRROR"
fi

keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || die "$keyring missing (install debian-archive-keyring)"

: > "$apt_dir/status"
: > "$apt_dir/preferences"
{
  for s in $SUITES; do
    echo "deb [signed-by=$keyring] $mirror $s main"
  done
} > "$apt_dir/sources.list"

apt_opts=(
  -o "Dir::Etc::sourcelist=$apt_dir/sources.list"
  -o "Dir::Etc::sourceparts=-"
  -o "Dir::Etc::preferences=$apt_dir/preferences"
  -o "Dir::Etc::preferencesparts=$apt_dir/preferences.d"
  -o "Dir::State=$apt_dir"
  -o "Dir::State::Lists=$apt_dir/lists"
  -o "Dir::State::status=$apt_dir/status"
  -o "Dir::Cache=$apt_dir/cache"
  -o "APT::Get::List-Cleanup=0"
  -o "Debug::NoLocking=1"
  -o "Acquire::Languages=none"
  -o "APT::Install-Recommends=0"
  -o "APT::Sandbox::User=root"
  -o "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"
  -o "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false"
  -o "Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false"
  -o "Acquire::IndexTargets::deb::CNF::DefaultEnabled=false"
)

refresh_lists() {
  phase lists
  apt-get "${apt_opts[@]}" -q update >&2 || die "apt-get update against $mirror ($SUITES) failed"
  touch "$stamps/lists"
  lists_refreshed=1
  phase_done
}

# Phase 2: resolve the package set. Virtual packages print as <name>; their
# providers are recursed into as top-level entries, so only real names count.
# Then the exact files: apt-get download's scheme NAME_VERSION_ARCH.deb with
# the epoch colon escaped as %3a.
resolve() {
  phase resolve
  mapfile -t dev_pkgs < <(
    apt-cache "${apt_opts[@]}" depends --recurse --no-recommends --no-suggests \
      --no-conflicts --no-breaks --no-replaces --no-enhances "$ROOT_PKG" \
      | awk '/^[a-z0-9]/ { print $1 } /Depends:/ { print $2 }' \
      | grep -E '^golang-.*-dev$' | sort -u
  )
  [ "${#dev_pkgs[@]}" -gt 10 ] || die "resolving $ROOT_PKG found only ${#dev_pkgs[@]} packages (apt lists broken?)"
  pkgs=("${dev_pkgs[@]}" "$GO_PKG" "$GO_SRC_PKG" etcd-server)
  mapfile -t wanted < <(
    apt-cache "${apt_opts[@]}" show --no-all-versions "${pkgs[@]}" \
      | awk '/^Package:/ { p = $2 } /^Version:/ { v = $2 } /^Architecture:/ { a = $2 }
             /^$/ { if (p != "") { gsub(":", "%3a", v); print p "_" v "_" a ".deb" }; p = "" }
             END { if (p != "") { gsub(":", "%3a", v); print p "_" v "_" a ".deb" } }'
  )
  [ "${#wanted[@]}" -eq "${#pkgs[@]}" ] || die "apt-cache show described ${#wanted[@]} of ${#pkgs[@]} packages"
  log "resolved ${#pkgs[@]} packages (${#dev_pkgs[@]} Go source packages)"
  phase_done
}

# Phase 3: download the .debs not yet in the cache (apt verifies each hash).
download() {
  phase download
  missing=()
  for file in "${wanted[@]}"; do
    [ -s "$debs/$file" ] || missing+=("${file%%_*}")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    log "downloading ${#missing[@]} packages from $mirror"
    (cd "$debs" && apt-get "${apt_opts[@]}" -q download "${missing[@]}" >&2) || return 1
    for file in "${wanted[@]}"; do
      [ -s "$debs/$file" ] || { log "expected $debs/$file after download"; return 1; }
    done
  fi
  phase_done
}

# Phase 1: package lists. Fetched when missing or on REALAPI_REFRESH=1, and
# again when a download fails (sid drops superseded versions from the
# mirror). A cache that already holds every file is never re-resolved
# against newer lists behind the user's back, so a built server stays put.
lists_refreshed=0
if [ ! -e "$stamps/lists" ] || [ "${REALAPI_REFRESH:-}" = 1 ]; then
  refresh_lists
fi
resolve
if ! download; then
  [ "$lists_refreshed" = 0 ] || die "apt-get download from $mirror failed"
  log "download failed with cached package lists; refreshing them"
  refresh_lists
  resolve
  download || die "apt-get download from $mirror failed"
fi
printf '%s\n' "${wanted[@]}" > "$cache/packages.new"

# A changed package set (new versions) gets a clean root: files a newer
# source package no longer ships must not linger in the GOPATH.
if [ -e "$cache/packages.txt" ] && ! cmp -s "$cache/packages.txt" "$cache/packages.new"; then
  log "package set changed; unpacking into a clean root"
  rm -rf "$root" "$stamps/unpacked"
  mkdir -p "$root"
fi
mv -f "$cache/packages.new" "$cache/packages.txt"

# Phase 4: unpack each .deb into the private root (never into the system).
phase unpack
mkdir -p "$stamps/unpacked"
todo=()
for file in "${wanted[@]}"; do
  [ -e "$stamps/unpacked/$file" ] || todo+=("$file")
done
if [ "${#todo[@]}" -gt 0 ]; then
  log "unpacking ${#todo[@]} packages into $root"
  printf '%s\n' "${todo[@]}" | xargs -P 2 -I{} sh -c \
    'dpkg-deb -x "$1/$3" "$2" && touch "$4/unpacked/$3"' _ "$debs" "$root" {} "$stamps" \
    || die "dpkg-deb -x failed"
fi
phase_done

goroot="$root/$GOROOT_REL"
[ -x "$goroot/bin/go" ] || die "go toolchain missing at $goroot/bin/go"
[ -d "$goroot/src/runtime" ] || die "go standard library sources missing under $goroot/src ($GO_SRC_PKG not unpacked?)"
etcd_bin="$root/usr/bin/etcd"
[ -x "$etcd_bin" ] || die "etcd missing at $etcd_bin"
ln -sf "$etcd_bin" "$bin/etcd"

# The server reports the Kubernetes version matching the packaged sources:
# apiextensions-apiserver 0.X.Y is Kubernetes v1.X.Y.
ext_deb=$(printf '%s\n' "${wanted[@]}" | grep "^${ROOT_PKG}_" | head -n1)
ext_ver="${ext_deb#"${ROOT_PKG}"_}"; ext_ver="${ext_ver%%[-+]*}"; ext_ver="${ext_ver#*%3a}"
[[ "$ext_ver" =~ ^0\.([0-9]+)\.([0-9]+)$ ]] || die "cannot derive the Kubernetes version from $ext_deb"
K8S_VERSION="v1.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"

# Phase 5: build our server main in GOPATH mode, offline. The binary is
# named by a hash of main.go, this script and the package set
# (realapi_server_key in lib.sh), so work trees with different versions of
# main.go share the cache without rebuilding over each other.
phase build
gopath="$cache/gopath"
key=$(realapi_server_key "$here" "$cache")
pkg_dir="$gopath/src/kubectl-fleet.dev/realapi-$key"
server="$bin/fleet-realapi-server-$key"
if [ -x "$server" ]; then
  log "server binary up to date"
else
  mkdir -p "$pkg_dir"
  install -m 0644 "$here/main.go" "$pkg_dir/main.go"
  ver_pkg="k8s.io/component-base/version"
  major="${K8S_VERSION#v}"; major="${major%%.*}"
  minor="${K8S_VERSION#v*.}"; minor="${minor%%.*}"
  ldflags="-s -w -X $ver_pkg.gitVersion=$K8S_VERSION -X $ver_pkg.gitMajor=$major -X $ver_pkg.gitMinor=$minor"
  ldflags+=" -X $ver_pkg.gitTreeState=clean -X $ver_pkg.buildDate=1970-01-01T00:00:00Z"
  (
    cd "$pkg_dir"
    env GO111MODULE=off GOFLAGS= GOPATH="$gopath:$root/usr/share/gocode" GOROOT="$goroot" \
      GOTOOLCHAIN=local GOPROXY=off GOSUMDB=off CGO_ENABLED=0 GOCACHE="$cache/gocache" \
      "$goroot/bin/go" build -trimpath -ldflags "$ldflags" -o "$server.tmp.$$" .
  ) || { rm -f "$server.tmp.$$"; die "go build of tools/realapi/main.go failed"; }
  mv -f "$server.tmp.$$" "$server"
  rm -rf "$pkg_dir"
  # Keep the four newest builds (about 75 MB each).
  find "$bin" -maxdepth 1 -name 'fleet-realapi-server-*' ! -name '*.tmp.*' -printf '%T@ %p\n' \
    | sort -rn | tail -n +5 | cut -d' ' -f2- | xargs -r rm -f
fi
phase_done

log "ready: $server ($K8S_VERSION) and $bin/etcd"
