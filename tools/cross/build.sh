#!/usr/bin/env bash
# Builds kubectl-fleet and fleet-operator for linux/arm64
# (aarch64-unknown-linux-gnu) on this linux/amd64 machine, from Debian
# packages only, into a cache folder outside the work tree (docs/platforms.md).
#
#   bash tools/cross/build.sh [--release] [--windows-check]
#       cache: ${CROSS_CACHE:-$HOME/.cache/kubectl-fleet-cross}
#
# The toolchain is Debian sid's rustc and cargo with libstd-rust-dev:arm64
# and gcc-aarch64-linux-gnu, inside a `debootstrap --variant=minbase` root
# (this machine's glibc is too old to run sid's rustc; the standard library
# must come from the compiler's own toolchain, so rustup's std cannot be
# mixed in). The work tree is copied into the root (git's tracked and
# untracked-but-not-ignored files, mtimes kept so cargo rebuilds only what
# changed) and built there with `cargo build --locked`.
#
# Result (printed as the last line, KEY=VALUE):
#   $CACHE/out/dev/{kubectl-fleet,fleet-operator}       (default: dev profile, what the tests run)
#   $CACHE/out/release/{kubectl-fleet,fleet-operator}   (--release: the shipped profile, for sizes)
#   $CACHE/root/usr/aarch64-linux-gnu                   the prefix for `qemu-aarch64 -L`
# --windows-check also proves the Windows leg compiles: Debian ships no
# Windows standard library for sid's rustc 1.97 (libstd-rust-dev-windows
# is not in the mirror's sid), so it installs rust-src and mingw-w64 and
# runs `cargo check -Zbuild-std --target x86_64-pc-windows-gnu` of the
# library and both binaries (RUSTC_BOOTSTRAP=1: build-std is unstable).
#
# Every phase leaves a stamp, so a second run only rebuilds what changed.
# tools/test.sh runs it (and installs qemu-user for the tests).
set -euo pipefail

readonly SUITE=sid
readonly TARGET=aarch64-unknown-linux-gnu
readonly WIN_TARGET=x86_64-pc-windows-gnu
# Packages of the root, beyond minbase. Changing this list rebuilds the root's toolchain.
readonly TOOLCHAIN_PKGS="ca-certificates rustc cargo libstd-rust-dev:arm64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross binutils-aarch64-linux-gnu"
readonly WINDOWS_PKGS="rust-src gcc-mingw-w64-x86-64-posix"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/../.." && pwd)"
cache="${CROSS_CACHE:-${HOME:-/root}/.cache/kubectl-fleet-cross}"
root="$cache/root"
stamps="$cache/stamps"

die() { echo "cross build: error: $*" >&2; exit 1; }
log() { echo "cross build: $*" >&2; }
phase_start=0
phase() { phase_name="$1"; phase_start=$(date +%s); log "phase $phase_name ..."; }
phase_done() { log "phase $phase_name took $(( $(date +%s) - phase_start ))s"; }

profile=dev
windows=0
for arg in "$@"; do
  case "$arg" in
    --release) profile=release ;;
    --windows-check) windows=1 ;;
    *) die "unknown argument '$arg' (use --release and/or --windows-check)" ;;
  esac
done

[ "$(id -u)" = 0 ] || die "needs root (debootstrap and chroot)"
for tool in debootstrap chroot unshare git tar; do
  command -v "$tool" >/dev/null || die "'$tool' not found (apt-get install debootstrap)"
done
mkdir -p "$cache" "$stamps"

# The Debian mirror this machine's apt already uses (deb822 or one-line).
find_mirror() {
  local f uri
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    uri=$(grep -Eo 'https?://[^ ]+' "$f" | grep -Ev 'security' | grep -E '/debian/?$' | head -n1 || true)
    [ -n "$uri" ] && { echo "${uri%/}"; return 0; }
  done
  return 1
}

# Runs a command in the root with /proc and /dev mounted in a private mount
# namespace: the mounts vanish with the command, none is left behind.
in_root() {
  unshare --mount --propagation private -- sh -c '
    root="$1"; shift
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/build LANG=C.UTF-8 "$@"
  ' in_root "$root" "$@"
}

# The sid Release file the mirror serves may read as expired; its signature is still checked.
apt_in_root() {
  in_root apt-get -q -o Acquire::Check-Valid-Until=false -o APT::Install-Recommends=0 \
    -o Dpkg::Use-Pty=0 "$@"
}

# Phase 1: the minbase root.
if [ ! -e "$stamps/root" ]; then
  phase root
  mirror="${CROSS_DEBIAN_MIRROR:-}"
  [ -n "$mirror" ] || mirror="$(find_mirror)" || die "no Debian mirror in /etc/apt/sources.list*; set CROSS_DEBIAN_MIRROR"
  rm -rf "$root"
  # In a private mount namespace: an interrupted debootstrap leaves no /proc mounted in the root.
  unshare --mount --propagation private -- \
    debootstrap --variant=minbase "$SUITE" "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 \
    || die "debootstrap $SUITE from $mirror failed (see $cache/debootstrap.log)"
  rm -f "$stamps"/toolchain-*
  touch "$stamps/root"
  phase_done
fi
cp -f /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# cargo in the root trusts what this machine trusts (a proxy's CA included).
host_ca="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
[ -r "$host_ca" ] || die "$host_ca missing (apt-get install ca-certificates)"
mkdir -p "$root/build"
cp -f "$host_ca" "$root/build/host-ca.crt"

# Phase 2: the toolchain. `apt-get --fix-broken install` first settles
# whatever a previous interrupted run left unconfigured.
pkgs="$TOOLCHAIN_PKGS"
[ "$windows" = 1 ] && pkgs="$pkgs $WINDOWS_PKGS"
key=$(echo "$pkgs" | sha256sum | cut -c1-16)
if [ ! -e "$stamps/toolchain-$key" ]; then
  phase toolchain
  in_root dpkg --add-architecture arm64
  apt_in_root update >&2 || die "apt-get update in the root failed"
  apt_in_root -y --fix-broken install >&2 || die "apt-get --fix-broken install in the root failed"
  # shellcheck disable=SC2086
  apt_in_root -y install $pkgs >&2 || die "apt-get install $pkgs in the root failed"
  apt_in_root clean >&2
  touch "$stamps/toolchain-$key"
  phase_done
fi
log "toolchain: $(in_root rustc --version)"

# Phase 3: the sources. A fresh copy each run (files deleted in the work
# tree must not linger); tar keeps mtimes, so cargo's fingerprints hold.
phase sources
rm -rf "$root/build/src"
mkdir -p "$root/build/src" "$root/build/cargo"
(cd "$src" && git ls-files -z --cached --others --exclude-standard \
  | xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' _ \
  | tar --null -T - -cf -) | tar -xf - -C "$root/build/src"
phase_done

cargo_env=(
  CARGO_HOME=/build/cargo
  CARGO_HTTP_CAINFO=/build/host-ca.crt
  CARGO_TARGET_DIR=/build/target
  CARGO_TERM_COLOR=never
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
  CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
  AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
  CARGO_INCREMENTAL=0
)
if [ "$profile" = dev ]; then
  # The tests run these binaries only: no debug info (smaller, faster to link).
  cargo_env+=(CARGO_PROFILE_DEV_DEBUG=false)
fi

# Phase 4: the arm64 binaries.
phase "build-$profile"
flag=()
[ "$profile" = release ] && flag=(--release)
in_root sh -c 'cd /build/src && exec env "$@"' _ "${cargo_env[@]}" \
  cargo build --locked "${flag[@]}" --target "$TARGET" --bin kubectl-fleet --bin fleet-operator >&2 \
  || die "cargo build --target $TARGET failed"
out="$cache/out/$profile"
mkdir -p "$out"
dir=debug
[ "$profile" = release ] && dir=release
for b in kubectl-fleet fleet-operator; do
  cp -f "$root/build/target/$TARGET/$dir/$b" "$out/$b.tmp"
  mv -f "$out/$b.tmp" "$out/$b"
done
phase_done

if [ "$windows" = 1 ]; then
  phase windows-check
  in_root sh -c 'cd /build/src && exec env "$@"' _ "${cargo_env[@]}" \
    CARGO_TARGET_DIR=/build/target-windows RUSTC_BOOTSTRAP=1 \
    cargo check --locked -Zbuild-std=std,panic_abort --target "$WIN_TARGET" \
    --lib --bin kubectl-fleet --bin fleet-operator >&2 \
    || die "cargo check --target $WIN_TARGET failed"
  phase_done
fi

echo "CROSS_BIN_DIR=$out CROSS_SYSROOT=$root/usr/aarch64-linux-gnu CROSS_ROOT=$root"
