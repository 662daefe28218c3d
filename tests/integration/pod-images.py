#!/usr/bin/env python3
"""pod-images.py - the root filesystem of a test pod's image, as a tarball
on stdout that `podman import -` turns into an image
(tests/integration/pods.sh runs both at once, each into its import).

  pod-images.py pod ARCHIVE CLASSES JDK17 [JDK25]
  pod-images.py nosh CLASSES JDK17

ARCHIVE is jprof's image as `make images` wrote it (an OCI archive, an
image index of one image per architecture or one image): the first layer of
this machine's image is the Debian base jprof was built on. pod is that
base + the JDK 17 runtime in /usr/lib/jvm/jre17 (+ JDK 25's in jre25) +
CLASSES in /app, with users nonroot (65532) and app (10001) added.
nosh is distroless-like: the JDK 17 runtime, exactly the shared libraries it
and its own libraries load (ldd), /etc/passwd, /etc/group, /tmp and /app: no
shell, no coreutils.

The runtime is the JDK's bin/java, lib, conf and release, with symbolic
links resolved (Debian's JDK points into /etc), less what a runtime never
reads: the sources (src.zip), javac's ct.sym, and the class-data archives
of the modes the pods do not run in (no compressed oops, compact object
headers): classes.jsa, the default one, stays.
"""
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile

USERS = "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n" \
        "app:x:10001:10001:app:/app:/sbin/nologin\n"
GROUPS = "nonroot:x:65532:\napp:x:10001:\n"
UNUSED = ("src.zip", "ct.sym")


def base_layer(archive):
    """The first layer of the archive's image, as an open tar stream."""
    outer = tarfile.open(archive)

    def blob(digest):
        return outer.extractfile("blobs/" + digest.replace(":", "/")).read()
    index = json.load(outer.extractfile("index.json"))
    manifest = json.loads(blob(index["manifests"][0]["digest"]))
    if "manifests" in manifest:
        # an image index (one image per architecture): this machine's
        arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)
        mine = [m for m in manifest["manifests"]
                if m.get("platform", {}).get("architecture") == arch]
        manifest = json.loads(blob(mine[0]["digest"]))
    layer = manifest["layers"][0]
    data = blob(layer["digest"])
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return tarfile.open(fileobj=io.BytesIO(data))


def add_bytes(out, path, data, mode=0o644):
    ti = tarfile.TarInfo(path)
    ti.size, ti.mode = len(data), mode
    out.addfile(ti, io.BytesIO(data))


def add_dir(out, path, mode=0o755):
    ti = tarfile.TarInfo(path)
    ti.type, ti.mode = tarfile.DIRTYPE, mode
    out.addfile(ti)


def add_file(out, real, arcname):
    """real as arcname, its parent directories first unless the tar has them
    (mode 0755: without them the importer makes them 0700); out.made is the
    set of the names out holds"""
    parts = arcname.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        d = "/".join(parts[:i])
        if d not in out.made:
            out.made.add(d)
            add_dir(out, d)
    out.made.add(arcname)
    out.add(real, arcname=arcname, recursive=False)


def tar_new(stream):
    out = tarfile.open(fileobj=stream, mode="w|")
    out.made = set()
    return out


def runtime_files(jdk):
    """(path in the JDK, real file) of the runtime's files, links resolved."""
    for top in ("bin/java", "lib", "conf", "release"):
        src = os.path.join(jdk, top)
        if os.path.isfile(src):
            yield top, os.path.realpath(src)
            continue
        for d, dirs, files in os.walk(src, followlinks=True):
            dirs.sort()
            for f in sorted(files):
                real = os.path.realpath(os.path.join(d, f))
                if f in UNUSED or (f.startswith("classes_") and f.endswith(".jsa")) or \
                        not os.path.isfile(real):
                    continue  # see the top, or a link to what is not installed
                yield os.path.relpath(os.path.join(d, f), jdk), real


def add_runtime(out, jdk, dest):
    sos = []
    for rel, real in runtime_files(jdk):
        add_file(out, real, dest + "/" + rel)
        if rel.endswith(".so") or rel == "bin/java":
            sos.append(real)
    return sos


def add_classes(out, classes):
    for d, dirs, files in os.walk(classes):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(d, f)
            add_file(out, p, "app/" + os.path.relpath(p, classes))


def libraries(objects):
    """The shared libraries ldd resolves for objects (absolute paths)."""
    libs = set()
    for obj in objects:
        r = subprocess.run(["ldd", obj], capture_output=True, text=True)
        for line in r.stdout.splitlines():
            words = line.split()
            for w in words:
                if w.startswith("/") and "not found" not in line:
                    libs.add(w)
    return sorted(libs)


def pod_tar(stream, archive, classes, jdk17, jdk25):
    base = base_layer(archive)
    with tar_new(stream) as out:
        passwd = group = b""
        for m in base:
            name = m.name[2:] if m.name.startswith("./") else m.name
            name = name.rstrip("/")
            out.made.add(name)
            if name in ("", "."):
                m.mode = 0o755  # a base made before build-images set it had 0700
            if os.path.basename(name).startswith(".wh."):
                continue
            if name == "etc/passwd":
                passwd = base.extractfile(m).read()
                continue
            if name == "etc/group":
                group = base.extractfile(m).read()
                continue
            out.addfile(m, base.extractfile(m) if m.isreg() else None)
        add_bytes(out, "etc/passwd", passwd + USERS.encode())
        add_bytes(out, "etc/group", group + GROUPS.encode())
        add_runtime(out, jdk17, "usr/lib/jvm/jre17")
        if jdk25:
            add_runtime(out, jdk25, "usr/lib/jvm/jre25")
        add_classes(out, classes)


def nosh_tar(stream, classes, jdk17):
    with tar_new(stream) as out:
        add_dir(out, "etc")
        add_dir(out, "tmp", 0o1777)
        out.made.update(("etc", "tmp"))
        add_bytes(out, "etc/passwd", ("root:x:0:0:root:/root:/sbin/nologin\n" + USERS).encode())
        add_bytes(out, "etc/group", ("root:x:0:\n" + GROUPS).encode())
        objects = add_runtime(out, jdk17, "usr/lib/jvm/jre17")
        for lib in libraries(objects):
            if not lib.startswith(os.path.realpath(jdk17)):
                add_file(out, os.path.realpath(lib), lib.lstrip("/"))
        add_classes(out, classes)


def main():
    out = sys.stdout.buffer
    if len(sys.argv) in (5, 6) and sys.argv[1] == "pod":
        pod_tar(out, sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "")
    elif len(sys.argv) == 4 and sys.argv[1] == "nosh":
        nosh_tar(out, sys.argv[2], sys.argv[3])
    else:
        sys.stderr.write(__doc__)
        return 2
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
