#!/usr/bin/env python3
"""Builds the fleet-operator container image offline, as an OCI image layout
and an OCI archive, from a built binary and the Containerfile.

    python3 tools/image/build.py --binary target/release/fleet-operator \
        --output DIR [--archive FILE] [--stage DIR]

No base image can be pulled and no container can be started on the build
machines, so the image is assembled directly (see docs/image.md): the
root filesystem is the stripped binary, the shared libraries `ldd` says it
links (taken from the machine's Debian packages, named with their versions
in the image config), the CA bundle of Debian's ca-certificates, an
/etc/passwd and /etc/group naming the numeric non-root user, and a
files-then-DNS /etc/nsswitch.conf. Every file is root-owned and read-only.

The image config (user, entrypoint, labels) is read from the Containerfile,
which accepts only the instructions used here, so that `docker build` of
the staged directory (`--stage DIR`, then `docker build -f Containerfile
DIR`) and this script make the same image. The output is deterministic:
same inputs, same digests.
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
GO_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}


def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


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


def package_of(path):
    """The Debian package owning `path` and its version (e.g. libc6=2.36-9)."""
    for candidate in (path, os.path.realpath(path)):
        out = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if out.returncode == 0:
            pkg = out.stdout.split(":")[0].strip()
            ver = subprocess.run(
                ["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True
            ).stdout
            return f"{pkg}={ver}"
    fail(f"{path} belongs to no Debian package: install it with apt-get")


def linked_libraries(binary):
    """(path in image, path on this machine) for every library the binary links."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True)
    if out.returncode != 0:
        if "not a dynamic executable" in out.stdout + out.stderr:
            return []
        fail(f"ldd {binary}: {out.stderr.strip()}")
    libs = []
    for line in out.stdout.splitlines():
        m = re.search(r"(?:=>\s*)?(/\S+)\s+\(0x", line)
        if m:
            libs.append(m.group(1))
        elif "not found" in line:
            fail(f"{binary} links a missing library: {line.strip()}")
    return libs


def stage(binary, user, rootfs):
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
    if shutil.which("strip"):
        subprocess.run(["strip", os.path.join(rootfs, BIN_PATH)], check=True)
    packages = set()
    for lib in linked_libraries(binary):
        put(lib, os.path.realpath(lib), mode=0o555)
        packages.add(package_of(lib))
    if not os.path.isfile(CA_BUNDLE):
        fail(f"{CA_BUNDLE} missing: apt-get install ca-certificates")
    put(CA_BUNDLE, CA_BUNDLE)
    packages.add(package_of("/usr/share/ca-certificates"))
    for pkg in sorted(packages):
        name = pkg.split("=")[0]
        copyright_file = f"/usr/share/doc/{name}/copyright"
        if os.path.isfile(copyright_file):
            put(copyright_file, copyright_file)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, help="the built fleet-operator")
    parser.add_argument("--output", help="directory for the OCI image layout")
    parser.add_argument("--archive", help="also write the layout as this OCI archive (.tar)")
    parser.add_argument("--stage", help="write the docker build context (rootfs/ + Containerfile) here")
    args = parser.parse_args()
    if not (args.output or args.stage):
        fail("pass --output DIR and/or --stage DIR")
    if not os.path.isfile(args.binary):
        fail(f"{args.binary} not found: build it with cargo build --release --bin fleet-operator")

    out = subprocess.run([args.binary, "--version"], capture_output=True, text=True)
    version = out.stdout.strip().rpartition(" ")[2]
    if out.returncode != 0 or not re.fullmatch(r"\d+\.\d+\.\d+\S*", version):
        fail(f"{args.binary} --version printed {out.stdout.strip()!r}")
    config = read_containerfile()
    arch = GO_ARCH.get(os.uname().machine) or fail(f"unsupported machine {os.uname().machine}")

    work = args.stage or (args.output.rstrip("/") + ".rootfs")
    rootfs = os.path.join(work, "rootfs")
    packages = stage(args.binary, config["user"], rootfs)
    if args.stage:
        shutil.copyfile(CONTAINERFILE, os.path.join(args.stage, "Containerfile"))
    if not args.output:
        return

    layer = layer_tar(rootfs)
    if not args.stage:
        shutil.rmtree(work)
    if os.path.exists(args.output):
        shutil.rmtree(args.output)
    os.makedirs(os.path.join(args.output, "blobs", "sha256"))
    compressed = io.BytesIO()
    with gzip.GzipFile(fileobj=compressed, mode="wb", compresslevel=6, mtime=0, filename="") as gz:
        gz.write(layer)
    layer_desc = write_blob(args.output, compressed.getvalue())
    labels = dict(config["labels"])
    labels["org.opencontainers.image.version"] = version
    labels["dev.kubectl-fleet.debian-packages"] = " ".join(packages)
    image_config = {
        # Fixed, so the same inputs give the same digest.
        "created": "1970-01-01T00:00:00Z",
        "architecture": arch,
        "os": "linux",
        "config": {
            "User": config["user"],
            "Entrypoint": config["entrypoint"],
            "Env": ["PATH=/usr/local/bin"],
            "Labels": labels,
        },
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{hashlib.sha256(layer).hexdigest()}"]},
        "history": [{"created_by": "tools/image/build.py (Containerfile)"}],
    }
    config_desc = write_blob(args.output, canonical(image_config))
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **config_desc},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", **layer_desc}],
        "annotations": {"org.opencontainers.image.version": version},
    }
    manifest_desc = write_blob(args.output, canonical(manifest))
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            **manifest_desc,
            "platform": {"architecture": arch, "os": "linux"},
            "annotations": {"org.opencontainers.image.ref.name": f"v{version}"},
        }],
    }
    with open(os.path.join(args.output, "index.json"), "wb") as f:
        f.write(canonical(index))
    with open(os.path.join(args.output, "oci-layout"), "wb") as f:
        f.write(canonical({"imageLayoutVersion": "1.0.0"}))

    if args.archive:
        with tarfile.open(args.archive, "w", format=tarfile.PAX_FORMAT) as tar:
            for rel in tree(args.output):
                add_entry(tar, os.path.join(args.output, rel), rel)
    size = layer_desc["size"] + config_desc["size"] + manifest_desc["size"]
    print(f"fleet-operator image v{version} ({arch}): {size / 1048576:.1f} MiB compressed, "
          f"{len(layer) / 1048576:.1f} MiB unpacked, manifest {manifest_desc['digest']}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
