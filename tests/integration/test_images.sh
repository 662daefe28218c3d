#!/bin/bash
# test_images.sh - the container image as a user gets it: `make distdir`
# (the release tree), scripts/build-images (offline: a debootstrap base when
# no registry answers), then the OCI archive it wrote is opened again: an
# image index with one image for linux/amd64 and one for linux/arm64
# (docs/ARM64.md). In this machine's image the programs run: --version of
# each installed program equals the build's version, the server's user is not
# root, the helper jar is where the programs look, both probes are there and
# static, no compiler is left, and jprof-server started inside the image
# answers /healthz on 127.0.0.1. In the other architecture's image every
# program is an ELF of that machine (the second probe of this one), and they
# run from that image's root under qemu-user: --version, user, mode of /.
# The slowest test (a cold build is 1-3 minutes): it runs at the end.
# Exit: 0 all passed, 1 some check failed, 77 skipped (no builder can run
# here; a failure under CI=true).
set -u

. "$(dirname "$0")/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/jprof-images.XXXXXX")
cleanup_dirs+=("$work")
version=$(sed -n 's/^VERSION = //p' "$builddir/Makefile")
out=$builddir/images

if ! make -C "$builddir" distdir distdir="$work/src" >"$work/distdir.log" 2>&1; then
    fail "make distdir" "$(tail -n 5 "$work/distdir.log")"
    summary "images"
fi
start=$(date +%s)
# the other architecture's programs from this build's cross tree, as make
# images takes them (built by test_cross already; without it the image's
# build stage cross-compiles them)
other_tree=()
if ! make -C "$builddir" images-other >"$work/other.log" 2>&1; then
    fail "make images-other" "$(tail -n 5 "$work/other.log")"
    summary "images"
fi
if [ -d "$builddir/images-other" ]; then
    other_tree=(--other-tree "$builddir/images-other")
    pass "the other architecture's programs installed from this build's cross tree in $(($(date +%s) - start)) s"
else
    echo "note: no cross build here: the image's build stage cross-compiles the other architecture"
fi
"$srcdir/scripts/build-images" "${other_tree[@]}" --out "$out" "$work/src" >"$work/build.out" 2>&1
rc=$?
secs=$(($(date +%s) - start))
sed 's/^/  | /' "$work/build.out"
[ $rc -eq 3 ] && skip_or_fail "a container builder (apt-get install buildah debootstrap): $(tail -n 1 "$work/build.out")"
if [ $rc -ne 0 ]; then
    fail "scripts/build-images (exit $rc after $secs s)" "$(tail -n 5 "$work/build.out")"
    summary "images"
fi
builder=$(sed -n 's/^build-images: builder: \([a-z]*\);.*/\1/p' "$work/build.out")
ref=$(sed -n 's/^image: *//p' "$work/build.out")
archive=$(sed -n 's/^archive: *\([^ ]*\) .*/\1/p' "$work/build.out")
digest=$(sed -n 's/^digest: *//p' "$work/build.out")
pass "scripts/build-images built $ref with $builder in $secs s"
[ "$ref" = "$("$srcdir/scripts/build-images" --print-ref "$work/src")" ] &&
    pass "the image is named as --print-ref (and so the manifests' check) says: $ref" ||
    fail "image $ref, --print-ref says otherwise"
if [ -s "$archive" ] && [ "$(dirname "$archive")" = "$out" ]; then
    bytes=$(stat -c %s "$archive")
    pass "archive $(basename "$archive"): $bytes bytes ($((bytes / 1048576)) MiB), digest $digest"
    [ "$bytes" -lt $((80 * 1048576)) ] && pass "the archive is under 80 MiB" ||
        fail "the archive is $bytes bytes (over 80 MiB)"
else
    fail "no archive in $out ('$archive')"
fi
[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] && pass "the archive's index digest is printed" ||
    fail "digest '$digest'"
rm -rf "$work/src" "$builddir/images-other"

# ---- the index: one image per architecture, each small enough ----
case $(uname -m) in
x86_64) arch=amd64 other=arm64 ;;
aarch64) arch=arm64 other=amd64 ;;
*) fail "no image for $(uname -m)"; summary "images" ;;
esac
# elf_machine FILE: readelf's name of the machine FILE is built for
elf_machine() { LC_ALL=C readelf -h "$1" 2>/dev/null | sed -n 's/^ *Machine: *//p'; }
declare -A machine=([amd64]="Advanced Micro Devices X86-64" [arm64]="AArch64")
python3 - "$archive" >"$work/index.txt" 2>&1 <<'PY'
import json, sys, tarfile
tar = tarfile.open(sys.argv[1])
def blob(digest):
    return json.load(tar.extractfile("blobs/sha256/" + digest.split(":", 1)[1]))
top = json.load(tar.extractfile("index.json"))["manifests"]
index = blob(top[0]["digest"])
print("index", len(top), index.get("mediaType", "?"))
for m in index["manifests"]:
    p = m.get("platform", {})
    image = blob(m["digest"])
    size = image["config"]["size"] + sum(layer["size"] for layer in image["layers"])
    print("image %s/%s %d %s" % (p.get("os"), p.get("architecture"), size, m["mediaType"]))
PY
read -r _ ntop mediatype < <(grep '^index ' "$work/index.txt")
[ "${ntop:-0}" = 1 ] && [ "$mediatype" = application/vnd.oci.image.index.v1+json ] &&
    pass "the archive holds one OCI image index" ||
    fail "the archive's index.json: $(head -n 3 "$work/index.txt")"
platforms=$(awk '$1 == "image" { print $2 }' "$work/index.txt" | sort | xargs)
[ "$platforms" = "linux/amd64 linux/arm64" ] &&
    pass "the index's images: $platforms" || fail "the index's images: '$platforms' (want linux/amd64 linux/arm64)"
while read -r _ platform bytes _; do
    [ "$bytes" -lt $((80 * 1048576)) ] && pass "$platform: $bytes bytes to pull ($((bytes / 1048576)) MiB), under 80 MiB" ||
        fail "$platform: $bytes bytes to pull (over 80 MiB)"
done < <(grep '^image ' "$work/index.txt")

# ---- run inside the image, opened from the archive ----
if [ "$builder" != buildah ]; then
    # podman/docker: their own run; only buildah's path is exercised here
    echo "note: builder $builder: the in-image checks run with buildah only"
    command -v buildah >/dev/null || skip_or_fail "buildah to open the archive (apt-get install buildah)"
fi
B=(buildah --storage-driver "${STORAGE_DRIVER:-vfs}")
# the list build-images left under $ref goes first: opening the archive
# stores each image under that same name, which would leave the list nameless
# in the store (buildah images does not list it, so nothing would remove it)
"${B[@]}" manifest rm "$ref" >/dev/null 2>&1
ctr=$("${B[@]}" from -q --pull-never --arch "$arch" --name "jprof-test-$$" "oci-archive:$archive" 2>"$work/from.err")
if [ -z "$ctr" ]; then
    fail "buildah from oci-archive:$archive" "$(tail -n 3 "$work/from.err")"
    summary "images"
fi
pass "the archive opens as this machine's image (buildah from --arch $arch oci-archive:)"
opened=("$("${B[@]}" inspect --type container -f '{{.FromImageID}}' "$ctr")")
in_image() { "${B[@]}" run --isolation chroot "$ctr" -- "$@"; }

label=$("${B[@]}" inspect --type container -f '{{index .OCIv1.Config.Labels "org.opencontainers.image.version"}}' "$ctr")
[ "$label" = "$version" ] && pass "image label org.opencontainers.image.version = $label" ||
    fail "image version label '$label' (want $version)"
# the root must be 0755: a 0700 / (a tarball's './' entry from a mktemp -d
# directory) lets no non-root user run anything in the image
rootmode=$("${B[@]}" run --isolation chroot --user 0:0 "$ctr" -- stat -c %a / 2>&1)
[ "$rootmode" = 755 ] && pass "the image's / is 0755" || fail "the image's / is '$rootmode', not 0755"
uid=$(in_image id -u 2>&1)
[ "$uid" = 10001 ] && pass "the image runs as user 10001, not root" || fail "image user: '$uid'"

progs=$(in_image sh -c 'for f in /usr/bin/jprof* /usr/sbin/jprof* /usr/bin/kubectl-jprof; do
    [ -x "$f" ] && echo "$f"; done; true')
n=0
for p in $progs; do
    # the other architecture's probe runs in a pod of that architecture
    # (checked by check_probes below)
    [ "$p" != "/usr/bin/jprof-probe-$other" ] || continue
    n=$((n + 1))
    v=$(in_image "$p" --version 2>&1)
    if grep -qF -- "$version" <<<"$v"; then
        pass "in the image: $p --version: $v"
    else
        fail "in the image: $p --version: '$v' (want $version)"
    fi
done
for p in /usr/sbin/jprof-agent /usr/sbin/jprof-server /usr/bin/jprof-top; do
    grep -qx "$p" <<<"$progs" && pass "$p is in the image" || fail "$p missing from the image"
done
in_image test -s /usr/share/jprof/jprof-helper.jar && pass "the helper jar is in /usr/share/jprof" ||
    fail "no /usr/share/jprof/jprof-helper.jar in the image"
# check_probes ROOT IMAGE_ARCH: both probes in an image's root, each static
# and built for its architecture (kubectl jprof in it reaches pods of both)
check_probes() {
    local root=$1 iarch=$2 p parch m
    for p in jprof-probe jprof-probe-amd64 jprof-probe-arm64; do
        case $p in
        jprof-probe) parch=$iarch ;;
        *) parch=${p#jprof-probe-}
            [ "$parch" != "$iarch" ] || continue ;;
        esac
        if [ ! -f "$root/usr/bin/$p" ]; then
            fail "linux/$iarch image: no /usr/bin/$p"
            continue
        fi
        m=$(elf_machine "$root/usr/bin/$p")
        if [ "$m" != "${machine[$parch]}" ]; then
            fail "linux/$iarch image: /usr/bin/$p is built for '$m', not $parch"
        elif LC_ALL=C readelf -l "$root/usr/bin/$p" 2>/dev/null | grep -q 'INTERP'; then
            fail "linux/$iarch image: /usr/bin/$p is dynamically linked"
        else
            pass "linux/$iarch image: /usr/bin/$p, static, $parch ($m)"
        fi
    done
}
mnt=$("${B[@]}" mount "$ctr")
check_probes "$mnt" "$arch"
"${B[@]}" umount "$ctr" >/dev/null
in_image sh -c 'command -v gcc cc javac' >/dev/null 2>&1 &&
    fail "a compiler is left in the runtime image" || pass "no compiler or JDK in the runtime image"

# jprof-server inside the image, on loopback (chroot isolation shares the
# host's network namespace): /healthz answers 200 to a client outside
"${B[@]}" run --isolation chroot "$ctr" -- jprof-server --listen 127.0.0.1:0 --port-file /tmp/port \
    --insecure-no-auth --data-dir /tmp/data >"$work/server.log" 2>&1 &
spid=$!
pids+=("$spid")
port=
for _ in $(seq 1 100); do # up to 20 s
    port=$(in_image cat /tmp/port 2>/dev/null)
    [ -n "$port" ] && break
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.2
done
if [ -z "$port" ]; then
    fail "jprof-server did not start in the image" "$(tail -n 3 "$work/server.log")"
else
    body=$(curl -s -m 5 "http://127.0.0.1:$port/healthz")
    [ "$body" = ok ] && pass "jprof-server in the image answers /healthz on 127.0.0.1:$port: $body" ||
        fail "/healthz of the server in the image: '$body'"
    code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 "http://127.0.0.1:$port/")
    [ "$code" = 200 ] && pass "the image's server serves its web page (/ -> 200)" || fail "web page: HTTP $code"
fi
kill "$spid" 2>/dev/null
for _ in $(seq 1 50); do
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.2
done
"${B[@]}" rm "$ctr" >/dev/null 2>&1 || fail "buildah rm $ctr"

# ---- the other architecture's image: its ELF files, run under qemu-user ----
octr=$("${B[@]}" from -q --pull-never --arch "$other" --name "jprof-test-$other-$$" \
    "oci-archive:$archive" 2>"$work/from.err")
if [ -z "$octr" ]; then
    fail "buildah from --arch $other oci-archive:$archive" "$(tail -n 3 "$work/from.err")"
else
    opened+=("$("${B[@]}" inspect --type container -f '{{.FromImageID}}' "$octr")")
    oarch=$("${B[@]}" inspect --type container -f '{{.OCIv1.Architecture}}' "$octr")
    [ "$oarch" = "$other" ] && pass "the archive opens as the linux/$other image too" ||
        fail "buildah from --arch $other gave an image of '$oarch'"
    omnt=$("${B[@]}" mount "$octr")
    oprogs=$(cd "$omnt" && ls usr/bin/jprof* usr/sbin/jprof* usr/bin/kubectl-jprof 2>/dev/null)
    for p in $oprogs; do
        m=$(elf_machine "$omnt/$p")
        want=${machine[$other]}
        [ "$p" != "usr/bin/jprof-probe-$arch" ] || want=${machine[$arch]}
        [ "$m" = "$want" ] && pass "linux/$other image: /$p is $m" || fail "linux/$other image: /$p is '$m', not $want"
    done
    for p in usr/sbin/jprof-agent usr/sbin/jprof-server usr/bin/jprof-top usr/bin/kubectl-jprof; do
        grep -qx "$p" <<<"$oprogs" || fail "linux/$other image: no /$p"
    done
    [ -s "$omnt/usr/share/jprof/jprof-helper.jar" ] && pass "linux/$other image: the helper jar is in /usr/share/jprof" ||
        fail "linux/$other image: no /usr/share/jprof/jprof-helper.jar"
    check_probes "$omnt" "$other"
    # the programs run from this image's root (its loader and libraries,
    # nothing of this machine's): qemu-user, static, copied into the
    # container, runs them in a chroot
    qarch=$([ "$other" = arm64 ] && echo aarch64 || echo x86_64)
    qemu=$(command -v "qemu-$qarch-static")
    if [ -z "$qemu" ]; then
        [ "${CI:-}" = true ] && fail "no qemu-$qarch-static (apt-get install qemu-user-static)" ||
            echo "NOT RUN HERE: the linux/$other programs (no qemu-$qarch-static: apt-get install qemu-user-static)"
    else
        cp "$qemu" "$omnt/tmp/qemu" && chmod 755 "$omnt/tmp/qemu"
        in_other() { "${B[@]}" run --isolation chroot "$@"; }
        for p in $oprogs; do
            [ "$p" != "usr/bin/jprof-probe-$arch" ] || continue
            v=$(in_other "$octr" -- /tmp/qemu "/$p" --version 2>&1)
            grep -qF -- "$version" <<<"$v" && pass "linux/$other image, under qemu-user: /$p --version: $v" ||
                fail "linux/$other image, under qemu-user: /$p --version: '$v' (want $version)"
        done
        ouid=$(in_other "$octr" -- /tmp/qemu /usr/bin/id -u 2>&1)
        [ "$ouid" = 10001 ] && pass "linux/$other image runs as user 10001" || fail "linux/$other image user: '$ouid'"
        omode=$(in_other --user 0:0 "$octr" -- /tmp/qemu /usr/bin/stat -c %a / 2>&1)
        [ "$omode" = 755 ] && pass "linux/$other image's / is 0755" || fail "linux/$other image's / is '$omode'"
    fi
    "${B[@]}" umount "$octr" >/dev/null
    "${B[@]}" rm "$octr" >/dev/null 2>&1 || fail "buildah rm $octr"
fi

# the archive in build/images is what the test leaves; the images and their
# list in the builder's store go (on vfs every image is a full copy), the
# bases stay
for i in "$ref-$arch" "$ref-$other" "$ref" "${opened[@]}"; do
    "${B[@]}" rmi "$i" >/dev/null 2>&1
done
"${B[@]}" images -q "$ref" "$ref-$arch" "$ref-$other" "${opened[@]}" 2>/dev/null | grep -q . &&
    echo "note: could not remove every image of $ref from the store"
summary "images"
