#!/usr/bin/env python3
"""Builds everything a kubectl-fleet release publishes, into one directory:

    python3 tools/release/release.py [--dist DIR]        (default: dist/)

- kubectl-fleet-vVERSION-OS-ARCH.tar.gz  krew archive (kubectl-fleet,
                                         kubectl_complete-fleet, LICENSE)
- kubectl-fleet-vVERSION-OS-ARCH         the plugin binary
- fleet-operator-vVERSION-OS-ARCH        the operator binary
- fleet-operator-vVERSION-oci.tar        the operator image, an OCI archive
                                         (tools/image/build.py)
- plugins/fleet.yaml                     the krew manifest with the sha256 of
                                         every archive: this repository's krew
                                         index entry (see "publishing" below)
- SHA256SUMS                             checksums of all of the above

It stops, before building anything, when the git working tree is dirty or
the versions disagree: the workspace version in Cargo.toml, the krew
manifest's version and URIs, a `v*` tag on HEAD if there is one, and what
the built binaries print (`kubectl fleet version --short`,
`fleet-operator --version`).

Binaries are built with `cargo build --release --locked` for this machine's
platform; there is no cross-compilation. Archives for the other krew
platforms (built by this script on their own machines, same names) may be
put into DIST beforehand: each must hold every file the manifest's `files`
name, or the script stops before building. The manifest lists exactly the
platforms whose archive is present, never one whose archive does not
exist. FLEET_RELEASE_BIN_DIR=DIR takes both binaries from DIR instead of
building them (the test suite's smoke run uses target/debug).

Publishing: upload everything but plugins/ to the GitHub release vVERSION,
then commit DIST/plugins/fleet.yaml as plugins/fleet.yaml at the root of this
repository, which is the custom krew index users add (README, docs/krew.md).
"""

import argparse
import fnmatch
import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# Shares the image builder's reproducible tar entries and error exit; no
# bytecode cache, which would make the tree dirty.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools", "image"))
import build as image_build  # noqa: E402

fail = image_build.fail
MANIFEST = os.path.join(ROOT, "krew-manifest.yaml")
OS_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def git(*args):
    out = subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"git {' '.join(args)}: {out.stderr.strip()} (the release is built from a git checkout)")
    return out.stdout


def workspace_version():
    text = open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8").read()
    m = re.search(r'^\[workspace\.package\][^\[]*?^version\s*=\s*"([^"]+)"', text, re.M | re.S)
    return m.group(1) if m else fail("no version in [workspace.package] of Cargo.toml")


def printed_version(binary, *args):
    out = subprocess.run([binary, *args], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"{binary} {' '.join(args)} failed: {out.stderr.strip()}")
    return out.stdout.strip().rpartition(" ")[2]


def check_versions(version, binaries):
    """Every place that names the version must name the same one."""
    found = {"Cargo.toml [workspace.package]": version}
    manifest = open(MANIFEST, encoding="utf-8").read()
    m = re.search(r"^  version: v(\S+)$", manifest, re.M)
    found["krew-manifest.yaml spec.version"] = m.group(1) if m else "(none)"
    for uri_version in sorted(set(re.findall(r"/download/v([^/]+)/", manifest))):
        found[f"a krew-manifest.yaml uri (v{uri_version})"] = uri_version
    for tag in git("tag", "--points-at", "HEAD").split():
        if tag.startswith("v"):
            found[f"git tag {tag}"] = tag[1:]
    found["kubectl fleet version --short"] = printed_version(binaries["kubectl-fleet"], "version", "--short")
    found["fleet-operator --version"] = printed_version(binaries["fleet-operator"], "--version")
    wrong = {k: v for k, v in found.items() if v != version}
    if wrong:
        fail("versions disagree: " + ", ".join(f"{k} says {v}" for k, v in found.items())
             + " (bump them together: edit Cargo.toml, then run tools/regen.sh)")


def krew_archive(path, binary):
    """kubectl-fleet, its completion helper and LICENSE, as the manifest's `files` expect."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, source, mode in [
            ("kubectl-fleet", binary, 0o755),
            ("kubectl_complete-fleet", os.path.join(ROOT, "completions", "kubectl_complete-fleet"), 0o755),
            ("LICENSE", os.path.join(ROOT, "LICENSE"), 0o644),
        ]:
            image_build.add_entry(tar, source, name, mode)
    with open(path, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", compresslevel=6, mtime=0, filename="") as gz:
        gz.write(raw.getvalue())


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def manifest_platforms():
    """The template split into its head and one text block per platform."""
    text = open(MANIFEST, encoding="utf-8").read()
    head, sep, platforms = text.partition("  platforms:\n")
    if not sep:
        fail("krew-manifest.yaml has no platforms: run tools/regen.sh")
    blocks = [b for b in re.split(r"(?m)^(?=  - selector:)", platforms) if b.strip()]
    return head + sep, blocks


def block_archive(block):
    return re.search(r"/(kubectl-fleet-v[^/\s]+\.tar\.gz)$", block, re.M).group(1)


def check_archive(path, block):
    """An archive must hold something for each `files.from` of its platform
    (krew refuses to install it otherwise)."""
    try:
        with tarfile.open(path, "r:gz") as tar:
            names = [m.name.removeprefix("./") for m in tar.getmembers() if not m.isdir()]
    except (OSError, tarfile.TarError) as e:
        fail(f"{path} is not a gzipped tar archive: {e}")
    for pattern in re.findall(r"^      - from: (\S+)$", block, re.M):
        if not fnmatch.filter(names, pattern):
            fail(f"{os.path.basename(path)} has no {pattern} (the manifest's files name it): "
                 "build it with this script on its platform")


def check_other_archives(dist, version, platform):
    """Archives put into DIST for other platforms are checked before anything
    is built: a platform the manifest knows, with every file it names."""
    if not os.path.isdir(dist):
        return
    _, blocks = manifest_platforms()
    by_archive = {block_archive(b): b for b in blocks}
    ours = f"kubectl-fleet-v{version}-{platform}.tar.gz"
    for name in sorted(os.listdir(dist)):
        if not re.fullmatch(rf"kubectl-fleet-v{re.escape(version)}-\w+-\w+\.tar\.gz", name) or name == ours:
            continue
        if name not in by_archive:
            fail(f"{name} in {dist} is for a platform the krew manifest does not list")
        check_archive(os.path.join(dist, name), by_archive[name])


def krew_manifest(dist):
    """The checked-in template with each platform's sha256 filled in; platforms
    without an archive in `dist` are left out (and named on stderr)."""
    head, blocks = manifest_platforms()
    head = "".join(l for l in head.splitlines(True) if not l.startswith("# "))
    kept, missing = [], []
    for block in blocks:
        archive = block_archive(block)
        path = os.path.join(dist, archive)
        if not os.path.isfile(path):
            missing.append(archive)
            continue
        check_archive(path, block)
        kept.append(re.sub(r"sha256: SHA256_\w+", f"sha256: {sha256(path)}", block))
    if missing:
        print(f"note: no archive for {', '.join(missing)}: the krew manifest leaves those platforms out",
              file=sys.stderr)
    return head + "".join(kept)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", default=os.path.join(ROOT, "dist"), help="output directory")
    args = parser.parse_args()
    dist = os.path.abspath(args.dist)

    dirty = git("status", "--porcelain", "--untracked-files=normal")
    inside = lambda p: p == dist or p.startswith(dist + os.sep)
    dirty = [l for l in dirty.splitlines() if not inside(os.path.abspath(os.path.join(ROOT, l[3:])))]
    if dirty:
        fail(f"the working tree is dirty ({len(dirty)} change(s), e.g. {dirty[0][3:]!r}): "
             "commit or stash them, a release is built from a commit")
    version = workspace_version()
    machine = os.uname().machine
    arch = OS_ARCH.get(machine) or fail(f"unsupported machine {machine}")
    platform = f"{sys.platform}-{arch}"
    check_other_archives(dist, version, platform)

    bin_dir = os.environ.get("FLEET_RELEASE_BIN_DIR")
    if not bin_dir:
        subprocess.run(["cargo", "build", "--release", "--locked",
                        "--bin", "kubectl-fleet", "--bin", "fleet-operator"], cwd=ROOT, check=True)
        bin_dir = os.path.join(ROOT, "target", "release")
    binaries = {b: os.path.join(bin_dir, b) for b in ("kubectl-fleet", "fleet-operator")}
    for b, path in binaries.items():
        if not os.access(path, os.X_OK):
            fail(f"{path} not found: build it, or unset FLEET_RELEASE_BIN_DIR")
    check_versions(version, binaries)

    os.makedirs(dist, exist_ok=True)
    published = []
    for b, path in binaries.items():
        out = os.path.join(dist, f"{b}-v{version}-{platform}")
        shutil.copyfile(path, out)
        os.chmod(out, 0o755)
        published.append(out)
    archive = os.path.join(dist, f"kubectl-fleet-v{version}-{platform}.tar.gz")
    krew_archive(archive, binaries["kubectl-fleet"])
    image = os.path.join(dist, f"fleet-operator-v{version}-oci.tar")
    layout = os.path.join(dist, ".oci-layout")
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "image", "build.py"),
                    "--binary", binaries["fleet-operator"], "--output", layout, "--archive", image],
                   check=True)
    shutil.rmtree(layout)
    published.append(image)
    archives = sorted(os.path.join(dist, f) for f in os.listdir(dist)
                      if re.fullmatch(rf"kubectl-fleet-v{re.escape(version)}-\w+-\w+\.tar\.gz", f))
    published.extend(archives)
    # krew reads an index's plugins/NAME.yaml, named after metadata.name.
    name = re.search(r"^metadata:\n  name: (\S+)$", open(MANIFEST, encoding="utf-8").read(), re.M)
    manifest = os.path.join(dist, "plugins", f"{name.group(1) if name else fail('no metadata.name')}.yaml")
    os.makedirs(os.path.dirname(manifest), exist_ok=True)
    with open(manifest, "w", encoding="utf-8") as f:
        f.write(krew_manifest(dist))
    published.append(manifest)
    with open(os.path.join(dist, "SHA256SUMS"), "w", encoding="utf-8") as f:
        for path in sorted(published):
            f.write(f"{sha256(path)}  {os.path.relpath(path, dist)}\n")
    print(f"release v{version} in {dist}:", file=sys.stderr)
    for path in sorted(published) + [os.path.join(dist, "SHA256SUMS")]:
        print(f"  {os.path.relpath(path, dist)}", file=sys.stderr)


if __name__ == "__main__":
    main()
