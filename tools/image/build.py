#!/usr/bin/env python3
"""Builds the fleet-operator container image offline, as an OCI image layout
and an OCI archive, from built binaries and the Containerfile: one image
per architecture, under one image index (a multi-arch image).

    python3 tools/image/build.py --binary target/release/fleet-operator \
        [--binary ARM64_BINARY --root arm64=ROOT] \
        --output DIR [--archive FILE] [--stage DIR]

No base image can be pulled and no container can be started on the build
machines, so the image is assembled directly (see docs/image.md): the
root filesystem is the stripped binary, the shared libraries its ELF
headers name (recursively) taken from a Debian root of its architecture
(this machine's `/` for its own architecture; for another one the root
`tools/cross/build.sh` makes, `--root ARCH=DIR`), named with their package
versions in the image config, the CA bundle of that root's
ca-certificates package, an /etc/passwd and /etc/group naming the numeric
non-root user, and a files-then-DNS /etc/nsswitch.conf. Every file is
root-owned and read-only. A binary's architecture is read from its ELF
header; one for another architecture is run under qemu-user to read its
version.

The layout's index.json names one image index (tag vVERSION) that lists
one manifest per architecture, so `skopeo copy --all` pushes them all and
a node pulls its own. The image config (user, entrypoint, labels) is read
from the Containerfile, which accepts only the instructions used here, so
that `docker build` of the staged directory (`--stage DIR` with one
binary, then `docker build -f Containerfile DIR`) and this script make the
same image. The output is deterministic: same inputs, same digests.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CONTAINERFILE = os.path.join(ROOT, "Containerfile")
BIN_PATH = "usr/local/bin/fleet-operator"
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
CA_SOURCE = "/usr/share/ca-certificates/mozilla"
GO_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}
# Per OCI architecture: ELF e_machine, Debian multiarch triplet, qemu-user
# name, strip program, and the platform's variant in the index.
ARCHES = {
    "amd64": {"machine": 0x3E, "triplet": "x86_64-linux-gnu", "qemu": "qemu-x86_64",
              "strip": ["x86_64-linux-gnu-strip", "strip"], "variant": None},
    "arm64": {"machine": 0xB7, "triplet": "aarch64-linux-gnu", "qemu": "qemu-aarch64",
              "strip": ["aarch64-linux-gnu-strip"], "variant": "v8"},
}
ELF_MACHINES = {a["machine"]: name for name, a in ARCHES.items()}


def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


def host_arch():
    return GO_ARCH.get(os.uname().machine) or fail(f"unsupported machine {os.uname().machine}")


def elf_arch(path):
    """The OCI architecture of a 64-bit little-endian ELF file, from its header."""
    with open(path, "rb") as f:
        head = f.read(20)
    if len(head) < 20 or head[:4] != b"\x7fELF":
        fail(f"{path} is not an ELF binary")
    machine = int.from_bytes(head[18:20], "little")
    return ELF_MACHINES.get(machine) or fail(f"{path}: unsupported ELF machine {machine:#x}")


def read_containerfile():
    """USER, ENTRYPOINT and LABELs of the Containerfile; anything it does
    not know is an error, so the two builds cannot drift apart."""
    config = {"labels": {}}
    for n, raw in enumerate(open(CONTAINERFILE, encoding="utf-8"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        if word == "FROM" and rest == "scratch":
            continue
        if word == "COPY" and rest == "rootfs/ /":
            continue
        if word == "USER":
            config["user"] = rest
        elif word == "ENTRYPOINT":
            config["entrypoint"] = json.loads(rest)
        elif word == "LABEL":
            key, _, value = rest.partition("=")
            config["labels"][key] = json.loads(value)
        else:
            fail(f"Containerfile:{n}: this build does not handle {line!r}")
    for key in ("user", "entrypoint"):
        if key not in config:
            fail(f"Containerfile has no {key.upper()}")
    return config


def in_root(root, path, depth=0):
    """`path` (absolute, as seen inside `root`) resolved to a regular file on
    this machine, following symlinks inside the root (an absolute link
    target is taken relative to the root, never to this machine's /)."""
    if depth > 40:
        fail(f"too many symlinks resolving {path} in {root}")
    parts = [p for p in path.split("/") if p]
    current = "/"
    for i, part in enumerate(parts):
        candidate = os.path.join(root, current.lstrip("/"), part)
        if os.path.islink(candidate):
            target = os.readlink(candidate)
            base = target if target.startswith("/") else os.path.join(current, target)
            rest = "/".join(parts[i + 1:])
            return in_root(root, os.path.normpath(os.path.join(base, rest)), depth + 1)
        current = os.path.join(current, part)
    return os.path.join(root, current.lstrip("/")), current


class Root:
    """A Debian root: where one architecture's libraries, CA bundle and
    package database are (this machine's / for its own architecture)."""

    def __init__(self, path, arch):
        self.path = os.path.abspath(path)
        self.arch = arch
        self.triplet = ARCHES[arch]["triplet"]
        admindir = os.path.join(self.path, "var/lib/dpkg")
        if not os.path.isdir(admindir):
            fail(f"{self.path} is not a Debian root (no var/lib/dpkg)")
        self.dpkg = ["--admindir", admindir]

    def file(self, path):
        """(file on this machine, canonical path inside the root)."""
        return in_root(self.path, path)

    def package_of(self, path):
        """The Debian package owning `path` in this root and its version
        (e.g. libc6=2.36-9); merged /usr means a file may be registered
        under either spelling."""
        _, canonical = self.file(path)
        candidates = [path, canonical]
        for p in (path, canonical):
            if p.startswith("/usr/"):
                candidates.append(p[4:])
            else:
                candidates.append("/usr" + p)
        for candidate in candidates:
            out = subprocess.run(["dpkg-query", *self.dpkg, "-S", candidate],
                                 capture_output=True, text=True)
            # Lines "PKG[:ARCH][, PKG…]: PATH"; merged /usr adds dpkg
            # diversion lines ("diversion by PKG from: PATH"), never owners.
            owners = [l.split(": ")[0].split(",")[0].strip() for l in out.stdout.splitlines()
                      if ": " in l and not l.startswith("diversion ")]
            if out.returncode == 0 and owners:
                owner = owners[0]
                name = owner.split(":")[0]
                ver = subprocess.run(["dpkg-query", *self.dpkg, "-W", "-f=${Version}", owner],
                                     capture_output=True, text=True).stdout.strip()
                return f"{name}={ver}"
        fail(f"{path} belongs to no Debian package in {self.path}: install it with apt-get")

    def library(self, name):
        """The image path and source of a shared library the binary needs."""
        for d in (f"/lib/{self.triplet}", f"/usr/lib/{self.triplet}", "/lib64", "/lib", "/usr/lib"):
            source, _ = self.file(f"{d}/{name}")
            if os.path.isfile(source):
                return f"/lib/{self.triplet}/{name}" if "/" not in name else name, f"{d}/{name}", source
        fail(f"{name} (needed by the binary) is not in {self.path}: install its package there")


def readelf(args, path):
    out = subprocess.run(["readelf", "-W", *args, path], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"readelf {path}: {out.stderr.strip()} (apt-get install binutils)")
    return out.stdout


def linked_libraries(binary, root):
    """(path in image, path in root, file on this machine) for the program
    interpreter and every library the binary needs, recursively, from the
    ELF headers (readelf reads any architecture's; ldd runs only the
    machine's own)."""
    found = {}
    interp = re.search(r"Requesting program interpreter: (\S+)\]", readelf(["-l"], binary))
    if interp:
        path = interp.group(1)
        source, _ = root.file(path)
        if not os.path.isfile(source):
            fail(f"program interpreter {path} missing from {root.path}")
        found[os.path.basename(path)] = (path, path, source)
    todo = [binary]
    while todo:
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf(["-d"], todo.pop()))
        for name in needed:
            if name in found:
                continue
            found[name] = root.library(name)
            todo.append(found[name][2])
    return sorted(found.values())


def strip_program(arch):
    for name in ARCHES[arch]["strip"]:
        if shutil.which(name):
            return name
    fail(f"no {' or '.join(ARCHES[arch]['strip'])} found to strip the {arch} binary "
         f"(apt-get install binutils{'' if arch == host_arch() else '-' + ARCHES[arch]['triplet']})")


def run_binary(binary, arch, root, *args):
    """Runs a binary of any architecture: a foreign one under qemu-user with
    the root's libraries."""
    if arch == host_arch():
        cmd = [binary, *args]
    else:
        qemu = ARCHES[arch]["qemu"]
        if not shutil.which(qemu):
            fail(f"{qemu} not found to run the {arch} binary (apt-get install qemu-user)")
        cmd = [qemu, "-L", root.path, binary, *args]
    return subprocess.run(cmd, capture_output=True, text=True)


def ca_bundle(root):
    """The CA bundle of the root's ca-certificates package: its certificates
    in name order, without certificates this machine added locally
    (/usr/local/share/ca-certificates, a proxy's CA)."""
    source, _ = root.file(CA_SOURCE)
    if not os.path.isdir(source):
        fail(f"{CA_SOURCE} missing in {root.path}: apt-get install ca-certificates")
    certs = sorted(f for f in os.listdir(source) if f.endswith(".crt"))
    if not certs:
        fail(f"no certificates in {source}")
    return "".join(open(os.path.join(source, c), encoding="utf-8").read().rstrip("\n") + "\n"
                   for c in certs)


def stage(binary, arch, root, user, rootfs):
    """Writes the root filesystem into `rootfs`; returns the packages used."""
    uid, _, gid = user.partition(":")
    if not (uid.isdigit() and gid.isdigit() and int(uid) != 0):
        fail(f"Containerfile USER must be numeric and non-root, not {user!r}")
    if os.path.exists(rootfs):
        shutil.rmtree(rootfs)
    os.makedirs(rootfs)

    def put(dest, source=None, text=None, mode=0o444):
        target = os.path.join(rootfs, dest.lstrip("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if source is not None:
            shutil.copyfile(source, target)
        else:
            with open(target, "w", encoding="utf-8") as f:
                f.write(text)
        os.chmod(target, mode)

    put(BIN_PATH, binary, mode=0o555)
    subprocess.run([strip_program(arch), os.path.join(rootfs, BIN_PATH)], check=True)
    packages = set()
    for image_path, root_path, source in linked_libraries(binary, root):
        put(image_path, source, mode=0o555)
        packages.add(root.package_of(root_path))
    put(CA_BUNDLE, text=ca_bundle(root))
    packages.add(root.package_of(CA_SOURCE))
    for pkg in sorted(packages):
        name = pkg.split("=")[0]
        copyright_file, _ = root.file(f"/usr/share/doc/{name}/copyright")
        if os.path.isfile(copyright_file):
            put(f"/usr/share/doc/{name}/copyright", copyright_file)
    put("/etc/passwd", text=f"root:x:0:0:root:/root:/sbin/nologin\n"
        f"nonroot:x:{uid}:{gid}:nonroot:/home/nonroot:/sbin/nologin\n")
    put("/etc/group", text=f"root:x:0:\nnonroot:x:{gid}:\n")
    put("/etc/nsswitch.conf", text="passwd: files\ngroup: files\nhosts: files dns\n")
    # The kubelet mounts its own /etc/hosts; this one serves a bare chroot.
    put("/etc/hosts", text="127.0.0.1\tlocalhost\n::1\tlocalhost\n")
    return sorted(packages)


def add_entry(tar, path, arcname, mode=None):
    """Adds one file or directory, root-owned with mtime 0 (reproducible)."""
    info = tar.gettarinfo(path, arcname=arcname)
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mtime = 0
    if mode is not None:
        info.mode = mode
    if info.isfile():
        with open(path, "rb") as f:
            tar.addfile(info, f)
    else:
        tar.addfile(info)


def tree(base):
    """Every directory and file under `base`, relative, parents first, sorted."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        rel = os.path.relpath(dirpath, base)
        if rel != ".":
            entries.append(rel)
        entries.extend(os.path.normpath(os.path.join(rel, f)) for f in sorted(filenames))
    return entries


def layer_tar(rootfs):
    """The layer: `rootfs` as a tar, root-owned and read-only (0555/0444)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel in tree(rootfs):
            path = os.path.join(rootfs, rel)
            mode = 0o555 if os.path.isdir(path) else os.stat(path).st_mode & 0o555
            add_entry(tar, path, rel, mode)
    return buf.getvalue()


def write_blob(layout, data):
    digest = hashlib.sha256(data).hexdigest()
    path = os.path.join(layout, "blobs", "sha256", digest)
    with open(path, "wb") as f:
        f.write(data)
    return {"digest": f"sha256:{digest}", "size": len(data)}


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def image(layout, rootfs, arch, version, packages, config):
    """Writes one architecture's layer, config and manifest; returns the
    manifest's index entry and its sizes."""
    layer = layer_tar(rootfs)
    compressed = io.BytesIO()
    with gzip.GzipFile(fileobj=compressed, mode="wb", compresslevel=6, mtime=0, filename="") as gz:
        gz.write(layer)
    layer_desc = write_blob(layout, compressed.getvalue())
    labels = dict(config["labels"])
    labels["org.opencontainers.image.version"] = version
    labels["dev.kubectl-fleet.debian-packages"] = " ".join(packages)
    platform = {"architecture": arch, "os": "linux"}
    if ARCHES[arch]["variant"]:
        platform["variant"] = ARCHES[arch]["variant"]
    image_config = {
        # Fixed, so the same inputs give the same digest.
        "created": "1970-01-01T00:00:00Z",
        **platform,
        "config": {
            "User": config["user"],
            "Entrypoint": config["entrypoint"],
            "Env": ["PATH=/usr/local/bin"],
            "Labels": labels,
        },
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{hashlib.sha256(layer).hexdigest()}"]},
        "history": [{"created_by": "tools/image/build.py (Containerfile)"}],
    }
    config_desc = write_blob(layout, canonical(image_config))
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **config_desc},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", **layer_desc}],
        "annotations": {"org.opencontainers.image.version": version},
    }
    manifest_desc = write_blob(layout, canonical(manifest))
    entry = {"mediaType": "application/vnd.oci.image.manifest.v1+json", **manifest_desc,
             "platform": platform}
    size = layer_desc["size"] + config_desc["size"] + manifest_desc["size"]
    return entry, size, len(layer)


def parse_roots(values):
    roots = {}
    for value in values or []:
        arch, sep, path = value.partition("=")
        if not sep or arch not in ARCHES:
            fail(f"--root {value!r}: expected ARCH=DIR with ARCH one of {', '.join(ARCHES)}")
        roots[arch] = path
    return roots


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, action="append",
                        help="a built fleet-operator (repeat for each architecture)")
    parser.add_argument("--root", action="append", metavar="ARCH=DIR",
                        help="Debian root with ARCH's libraries (default: / for this machine's)")
    parser.add_argument("--output", help="directory for the OCI image layout")
    parser.add_argument("--archive", help="also write the layout as this OCI archive (.tar)")
    parser.add_argument("--stage", help="write the docker build context (rootfs/ + Containerfile) here")
    args = parser.parse_args()
    if not (args.output or args.stage):
        fail("pass --output DIR and/or --stage DIR")
    if args.stage and len(args.binary) > 1:
        fail("--stage takes one binary (a docker build context is one architecture)")
    roots = parse_roots(args.root)
    builds = {}
    for binary in args.binary:
        if not os.path.isfile(binary):
            fail(f"{binary} not found: build it with cargo build --release --bin fleet-operator")
        arch = elf_arch(binary)
        if arch in builds:
            fail(f"two {arch} binaries: {builds[arch]} and {binary}")
        if arch not in roots and arch != host_arch():
            fail(f"{binary} is {arch}: pass --root {arch}=DIR, the Debian root holding its "
                 "libraries (bash tools/cross/build.sh makes one)")
        builds[arch] = binary

    config = read_containerfile()
    versions = {}
    for arch, binary in builds.items():
        root = Root(roots.get(arch, "/"), arch)
        out = run_binary(binary, arch, root, "--version")
        version = out.stdout.strip().rpartition(" ")[2]
        if out.returncode != 0 or not re.fullmatch(r"\d+\.\d+\.\d+\S*", version):
            fail(f"{binary} --version printed {out.stdout.strip()!r} {out.stderr.strip()!r}")
        versions[arch] = (version, root)
    if len({v for v, _ in versions.values()}) != 1:
        fail("the binaries print different versions: "
             + ", ".join(f"{a} {v}" for a, (v, _) in sorted(versions.items())))
    version = next(iter(versions.values()))[0]

    work = args.stage or (args.output.rstrip("/") + ".rootfs")
    if args.output:
        if os.path.exists(args.output):
            shutil.rmtree(args.output)
        os.makedirs(os.path.join(args.output, "blobs", "sha256"))
    entries = []
    for arch in sorted(builds):
        rootfs = os.path.join(work, "rootfs") if args.stage else os.path.join(work, arch)
        packages = stage(builds[arch], arch, versions[arch][1], config["user"], rootfs)
        if not args.output:
            continue
        entry, size, unpacked = image(args.output, rootfs, arch, version, packages, config)
        entries.append(entry)
        print(f"fleet-operator image v{version} (linux/{arch}): {size / 1048576:.1f} MiB compressed, "
              f"{unpacked / 1048576:.1f} MiB unpacked, manifest {entry['digest']}", file=sys.stderr)
    if args.stage:
        shutil.copyfile(CONTAINERFILE, os.path.join(args.stage, "Containerfile"))
    else:
        shutil.rmtree(work)
    if not args.output:
        return

    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": entries,
        "annotations": {"org.opencontainers.image.version": version},
    }
    index_desc = write_blob(args.output, canonical(index))
    layout_index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.index.v1+json",
            **index_desc,
            "annotations": {"org.opencontainers.image.ref.name": f"v{version}"},
        }],
    }
    with open(os.path.join(args.output, "index.json"), "wb") as f:
        f.write(canonical(layout_index))
    with open(os.path.join(args.output, "oci-layout"), "wb") as f:
        f.write(canonical({"imageLayoutVersion": "1.0.0"}))

    if args.archive:
        with tarfile.open(args.archive, "w", format=tarfile.PAX_FORMAT) as tar:
            for rel in tree(args.output):
                add_entry(tar, os.path.join(args.output, rel), rel)
    print(f"fleet-operator image v{version}: index {index_desc['digest']} "
          f"({', '.join('linux/' + a for a in sorted(builds))})", file=sys.stderr)


if __name__ == "__main__":
    main()
