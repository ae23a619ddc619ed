#!/usr/bin/env python3
"""Builds everything a kubectl-fleet release publishes, into one directory:

    python3 tools/release/release.py [--dist DIR]        (default: dist/)
        [--arm64-bin-dir DIR [--arm64-root ROOT]]
        [--push REGISTRY/REPO [--insecure-registry]]
    python3 tools/release/release.py --cli-only [--dist DIR]

- kubectl-fleet-vVERSION-OS-ARCH.tar.gz  krew archive (kubectl-fleet,
                                         kubectl_complete-fleet, LICENSE; on
                                         Windows kubectl-fleet.exe, LICENSE)
- kubectl-fleet-vVERSION-OS-ARCH         the plugin binary (.exe on Windows)
- fleet-operator-vVERSION-linux-ARCH     the operator binary (Linux only)
- fleet-operator-vVERSION-oci.tar        the operator image, an OCI archive
                                         holding one image index with a
                                         manifest per architecture
                                         (tools/image/build.py)
- plugins/fleet.yaml                     the krew manifest with the sha256 of
                                         every archive: this repository's krew
                                         index entry (see "publishing" below)
- SHA256SUMS                             checksums of all of the above

It stops, before building anything, when the git working tree is dirty or
the versions disagree: the workspace version in Cargo.toml, the krew
manifest's version and URIs, a `v*` tag on HEAD if there is one, and what
the built binaries print (`kubectl fleet version --short`,
`fleet-operator --version`; an arm64 binary runs under qemu-aarch64).

Binaries are built with `cargo build --release --locked` for this machine's
platform. `--arm64-bin-dir DIR` adds linux/arm64 from DIR (the output of
`bash tools/cross/build.sh --release`, whose Debian root `--arm64-root`
holds the arm64 libraries; default: that script's cache): an arm64 image in
the index, the arm64 operator binary, and the linux/arm64 krew archive
unless DIST already holds one built natively. Archives for the other krew
platforms (built with `--cli-only` on their own machines, same names) may
be put into DIST beforehand: each must hold every file the manifest's
`files` name, or the script stops before building. The manifest lists
exactly the platforms whose archive is present, never one whose archive
does not exist. FLEET_RELEASE_BIN_DIR=DIR takes both binaries from DIR
instead of building them (the test suite's smoke run uses target/debug).

`--cli-only` (macOS, Windows, a native linux/arm64 runner) builds just this
platform's krew archive and plugin binary: no image, manifest or checksums.

`--push REGISTRY/REPO` copies the image index and every manifest to
REGISTRY/REPO:vVERSION with skopeo (`skopeo copy --all`; log in first with
`skopeo login`) and writes its digest to fleet-operator-vVERSION.digest, so
nodes can pull REGISTRY/REPO@DIGEST. `--insecure-registry` allows plain
HTTP without TLS verification, for a registry on loopback only.

Publishing: upload everything but plugins/ to the GitHub release vVERSION,
then commit DIST/plugins/fleet.yaml as plugins/fleet.yaml at the root of this
repository, which is the custom krew index users add (README, docs/krew.md).
.github/workflows/release.yml does all of this on a `v*` tag.
"""

import argparse
import fnmatch
import gzip
import hashlib
import io
import os
import platform as pyplatform
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
OS_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
OS_NAME = {"linux": "linux", "darwin": "darwin", "win32": "windows"}
CROSS_CACHE = os.environ.get("CROSS_CACHE") or os.path.join(
    os.path.expanduser("~"), ".cache", "kubectl-fleet-cross")


def host_platform():
    """This machine's krew (os, arch)."""
    os_name = OS_NAME.get(sys.platform) or fail(f"unsupported OS {sys.platform}")
    machine = pyplatform.machine().lower()
    arch = OS_ARCH.get(machine) or fail(f"unsupported machine {machine}")
    return os_name, arch


def exe(os_name, name):
    return f"{name}.exe" if os_name == "windows" else name


def git(*args):
    out = subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"git {' '.join(args)}: {out.stderr.strip()} (the release is built from a git checkout)")
    return out.stdout


def workspace_version():
    text = open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8").read()
    m = re.search(r'^\[workspace\.package\][^\[]*?^version\s*=\s*"([^"]+)"', text, re.M | re.S)
    return m.group(1) if m else fail("no version in [workspace.package] of Cargo.toml")


def printed_version(argv):
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"{' '.join(argv)} failed: {out.stderr.strip()}")
    return out.stdout.strip().rpartition(" ")[2]


def check_versions(version, runs):
    """Every place that names the version must name the same one; `runs`
    are (label, argv) of the built binaries printing theirs."""
    found = {"Cargo.toml [workspace.package]": version}
    manifest = open(MANIFEST, encoding="utf-8").read()
    m = re.search(r"^  version: v(\S+)$", manifest, re.M)
    found["krew-manifest.yaml spec.version"] = m.group(1) if m else "(none)"
    for uri_version in sorted(set(re.findall(r"/download/v([^/]+)/", manifest))):
        found[f"a krew-manifest.yaml uri (v{uri_version})"] = uri_version
    for tag in git("tag", "--points-at", "HEAD").split():
        if tag.startswith("v"):
            found[f"git tag {tag}"] = tag[1:]
    for label, argv in runs:
        found[label] = printed_version(argv)
    wrong = {k: v for k, v in found.items() if v != version}
    if wrong:
        fail("versions disagree: " + ", ".join(f"{k} says {v}" for k, v in found.items())
             + " (bump them together: edit Cargo.toml, then run tools/regen.sh)")


def krew_archive(path, binary, os_name):
    """The plugin, its completion helper (kubectl runs it on Unix) and
    LICENSE, as the manifest's `files` expect."""
    entries = [(exe(os_name, "kubectl-fleet"), binary, 0o755)]
    if os_name != "windows":
        entries.append(("kubectl_complete-fleet",
                        os.path.join(ROOT, "completions", "kubectl_complete-fleet"), 0o755))
    entries.append(("LICENSE", os.path.join(ROOT, "LICENSE"), 0o644))
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, source, mode in entries:
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
    is built: a platform the manifest knows, with every file it names.
    Returns their names."""
    if not os.path.isdir(dist):
        return []
    _, blocks = manifest_platforms()
    by_archive = {block_archive(b): b for b in blocks}
    ours = f"kubectl-fleet-v{version}-{platform}.tar.gz"
    others = []
    for name in sorted(os.listdir(dist)):
        if not re.fullmatch(rf"kubectl-fleet-v{re.escape(version)}-\w+-\w+\.tar\.gz", name) or name == ours:
            continue
        others.append(name)
        if name not in by_archive:
            fail(f"{name} in {dist} is for a platform the krew manifest does not list")
        check_archive(os.path.join(dist, name), by_archive[name])
    return others


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


def build_binaries(os_name):
    """This machine's release binaries (the operator on Linux only):
    FLEET_RELEASE_BIN_DIR's, or a fresh `cargo build --release`."""
    names = ["kubectl-fleet"] + (["fleet-operator"] if os_name == "linux" else [])
    bin_dir = os.environ.get("FLEET_RELEASE_BIN_DIR")
    if not bin_dir:
        cmd = ["cargo", "build", "--release", "--locked"]
        for b in names:
            cmd += ["--bin", b]
        subprocess.run(cmd, cwd=ROOT, check=True)
        bin_dir = os.path.join(ROOT, "target", "release")
    binaries = {b: os.path.join(bin_dir, exe(os_name, b)) for b in names}
    for path in binaries.values():
        if not os.access(path, os.X_OK):
            fail(f"{path} not found: build it, or unset FLEET_RELEASE_BIN_DIR")
    return binaries


def arm64_binaries(bin_dir, root):
    """The linux/arm64 binaries of `tools/cross/build.sh --release` and how
    to run them here (under qemu-aarch64 with the root's cross glibc)."""
    binaries = {b: os.path.join(bin_dir, b) for b in ("kubectl-fleet", "fleet-operator")}
    for path in binaries.values():
        if not os.path.isfile(path):
            fail(f"{path} not found: build it with `bash tools/cross/build.sh --release`")
        if image_build.elf_arch(path) != "arm64":
            fail(f"{path} is not a linux/arm64 binary")
    if not os.path.isdir(os.path.join(root, "var", "lib", "dpkg")):
        fail(f"--arm64-root {root} is not a Debian root: run `bash tools/cross/build.sh --release`")
    if shutil.which("qemu-aarch64") is None:
        fail("qemu-aarch64 not found to check the arm64 binaries' version (apt-get install qemu-user)")
    runner = ["qemu-aarch64", "-L", os.path.join(root, "usr", "aarch64-linux-gnu")]
    return binaries, runner


def push(layout, version, repo, insecure, digest_file):
    """Copies the image index and all its manifests to REPO:vVERSION."""
    if shutil.which("skopeo") is None:
        fail("skopeo not found to push the image (apt-get install skopeo)")
    if not re.fullmatch(r"[A-Za-z0-9.\-]+(:[0-9]+)?(/[a-z0-9._\-]+)+", repo):
        fail(f"--push {repo!r} is not REGISTRY/REPOSITORY (e.g. ghcr.io/kubectl-fleet/fleet-operator)")
    cmd = ["skopeo", "copy", "--all", "--preserve-digests", "--digestfile", digest_file]
    if insecure:
        cmd.append("--dest-tls-verify=false")
    cmd += [f"oci:{layout}:v{version}", f"docker://{repo}:v{version}"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"pushing to {repo}:v{version} failed: {out.stderr.strip().splitlines()[-1:]} "
             "(log in with `skopeo login REGISTRY` first)")
    digest = open(digest_file, encoding="utf-8").read().strip()
    print(f"pushed {repo}:v{version} = {repo}@{digest}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", default=os.path.join(ROOT, "dist"), help="output directory")
    parser.add_argument("--cli-only", action="store_true",
                        help="only this platform's krew archive and plugin binary")
    parser.add_argument("--arm64-bin-dir", help="linux/arm64 binaries from tools/cross/build.sh --release")
    parser.add_argument("--arm64-root", default=os.path.join(CROSS_CACHE, "root"),
                        help="the Debian root holding the arm64 libraries (tools/cross/build.sh's)")
    parser.add_argument("--push", metavar="REGISTRY/REPO", help="push the image index there with skopeo")
    parser.add_argument("--insecure-registry", action="store_true",
                        help="with --push: plain HTTP, no TLS verification (a loopback registry)")
    args = parser.parse_args()
    dist = os.path.abspath(args.dist)
    if args.cli_only and (args.arm64_bin_dir or args.push):
        fail("--cli-only builds no image: drop --arm64-bin-dir and --push")
    if args.insecure_registry and not args.push:
        fail("--insecure-registry only applies to --push")

    dirty = git("status", "--porcelain", "--untracked-files=normal")
    inside = lambda p: p == dist or p.startswith(dist + os.sep)
    dirty = [l for l in dirty.splitlines() if not inside(os.path.abspath(os.path.join(ROOT, l[3:])))]
    if dirty:
        fail(f"the working tree is dirty ({len(dirty)} change(s), e.g. {dirty[0][3:]!r}): "
             "commit or stash them, a release is built from a commit")
    version = workspace_version()
    os_name, arch = host_platform()
    platform = f"{os_name}-{arch}"
    if not args.cli_only and os_name != "linux":
        fail(f"the operator image is built on Linux: run this with --cli-only on {platform}")
    others = [] if args.cli_only else check_other_archives(dist, version, platform)

    binaries = build_binaries(os_name)
    runs = [("kubectl fleet version --short", [binaries["kubectl-fleet"], "version", "--short"])]
    if "fleet-operator" in binaries:
        runs.append(("fleet-operator --version", [binaries["fleet-operator"], "--version"]))
    arm64 = None
    if args.arm64_bin_dir:
        if arch == "arm64":
            fail("--arm64-bin-dir adds arm64 to an amd64 build; this machine is arm64 already")
        arm64, runner = arm64_binaries(os.path.abspath(args.arm64_bin_dir), os.path.abspath(args.arm64_root))
        runs.append(("arm64 kubectl fleet version --short", runner + [arm64["kubectl-fleet"], "version", "--short"]))
        runs.append(("arm64 fleet-operator --version", runner + [arm64["fleet-operator"], "--version"]))
    check_versions(version, runs)

    os.makedirs(dist, exist_ok=True)
    published = []
    builds = [(platform, os_name, binaries)]
    arm64_archive = f"kubectl-fleet-v{version}-linux-arm64.tar.gz"
    if arm64:
        if arm64_archive in others:
            print(f"note: {arm64_archive} is in {dist} already (a native build): kept; "
                  "the arm64 binaries go into the image only", file=sys.stderr)
            builds.append(("linux-arm64", "linux", {"fleet-operator": arm64["fleet-operator"]}))
        else:
            builds.append(("linux-arm64", "linux", arm64))
    for plat, plat_os, bins in builds:
        for b, path in bins.items():
            out = os.path.join(dist, exe(plat_os, f"{b}-v{version}-{plat}"))
            shutil.copyfile(path, out)
            os.chmod(out, 0o755)
            published.append(out)
        if "kubectl-fleet" in bins:
            archive = os.path.join(dist, f"kubectl-fleet-v{version}-{plat}.tar.gz")
            krew_archive(archive, bins["kubectl-fleet"], plat_os)
            if args.cli_only:
                published.append(archive)
    if args.cli_only:
        print(f"kubectl-fleet v{version} for {platform} in {dist}:", file=sys.stderr)
        for path in sorted(published):
            print(f"  {os.path.relpath(path, dist)}", file=sys.stderr)
        return

    image = os.path.join(dist, f"fleet-operator-v{version}-oci.tar")
    layout = os.path.join(dist, ".oci-layout")
    build_cmd = [sys.executable, os.path.join(ROOT, "tools", "image", "build.py"),
                 "--binary", binaries["fleet-operator"]]
    if arm64:
        build_cmd += ["--binary", arm64["fleet-operator"], "--root", f"arm64={os.path.abspath(args.arm64_root)}"]
    subprocess.run(build_cmd + ["--output", layout, "--archive", image], check=True)
    if args.push:
        digest_file = os.path.join(dist, f"fleet-operator-v{version}.digest")
        push(layout, version, args.push, args.insecure_registry, digest_file)
        published.append(digest_file)
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
