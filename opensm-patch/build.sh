#!/bin/bash
# Builds OpenSM 3.3.23 with the patches in patches/ (see README.md):
#
#   opensm-patch/build.sh OUTDIR
#
# leaves the patched daemon at OUTDIR/opensm, a Debian package that
# installs it over the distribution's (OUTDIR/opensm-osmroute_*.deb), and
# the SA client the tests use (OUTDIR/sa-first-path, tools/).
# Idempotent: a second run with the same OUTDIR, patches and script does
# nothing. Installs its build dependencies with apt-get when they are
# missing (as root, or through sudo).
set -euo pipefail

VERSION=3.3.23
TARBALL=opensm_${VERSION}.orig.tar.gz
TARBALL_SHA256=50773bfe7b66d3c70f4e572381904029023d3291f09ec4a9108219abd7430d3c
MIRROR=${OPENSM_MIRROR:-http://deb.debian.org/debian}
TARBALL_URL=$MIRROR/pool/main/o/opensm/$TARBALL
# The headers the plugin is built against; the patched build must
# configure to the same osm_config.h, or structure layouts differ.
INSTALLED_CONFIG_H=/usr/include/infiniband/opensm/osm_config.h
BUILD_DEPS=(autoconf automake libtool bison flex gcc make patch pkg-config libibumad-dev libopensm-dev libwrap0-dev opensm curl ca-certificates)

die() { echo "build.sh: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 OUTDIR"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)

# What the result depends on: the tarball, the patches, this script.
stamp_of() {
    { echo "$TARBALL_SHA256"; cat "$here/patches/series"
      while read -r p; do cat "$here/patches/$p"; done < "$here/patches/series"
      cat "$here/build.sh" "$here/make-deb.sh" "$here/tools/sa-first-path.c"; } | sha256sum | cut -d' ' -f1
}
stamp=$(stamp_of)
if [ -x "$out/opensm" ] && [ "$(cat "$out/.build-stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "build.sh: $out/opensm is up to date"
    exit 0
fi

missing=()
for dep in "${BUILD_DEPS[@]}"; do
    dpkg-query -W -f='${Status}' "$dep" 2>/dev/null | grep -q "install ok installed" || missing+=("$dep")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "build.sh: installing build dependencies: ${missing[*]}"
    sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get install -y --no-install-recommends "${missing[@]}" \
        || { $sudo apt-get update && $sudo apt-get install -y --no-install-recommends "${missing[@]}"; } \
        || die "cannot install ${missing[*]}; install them and run again"
fi

cd "$out"
if ! { [ -f "$TARBALL" ] && echo "$TARBALL_SHA256  $TARBALL" | sha256sum -c --quiet >/dev/null 2>&1; }; then
    echo "build.sh: downloading $TARBALL_URL"
    curl -fsSL -o "$TARBALL.part" "$TARBALL_URL" || die "cannot download $TARBALL_URL (set OPENSM_MIRROR to another Debian mirror)"
    echo "$TARBALL_SHA256  $TARBALL.part" | sha256sum -c --quiet || die "$TARBALL from $MIRROR has the wrong checksum"
    mv "$TARBALL.part" "$TARBALL"
fi

src=$out/build/opensm-$VERSION
rm -rf "$out/build" "$out/destdir"
mkdir -p "$out/build"
tar -xzf "$TARBALL" -C "$out/build"
while read -r p; do
    echo "build.sh: applying $p"
    patch -d "$src" -p1 --quiet --forward < "$here/patches/$p" || die "$p does not apply to OpenSM $VERSION"
done < "$here/patches/series"

cd "$src"
# (autogen.sh would want libtool-bin only for a version check.)
autoreconf --force --install -I config > "$out/build/autoreconf.log" 2>&1 || die "autoreconf failed; see $out/build/autoreconf.log"
# Debian's layout and defaults: config in /etc/opensm, libraries in the
# multiarch directory (the patched daemon uses the installed libopensm9;
# the patches touch only the daemon), the loopback console as Debian has.
./configure --prefix=/usr --sysconfdir=/etc --localstatedir=/var \
    --libdir=/usr/lib/"$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)" \
    --disable-static > "$out/build/configure.log" 2>&1 || die "configure failed; see $out/build/configure.log"
diff -u "$INSTALLED_CONFIG_H" include/opensm/osm_config.h \
    || die "the patched build's osm_config.h differs from $INSTALLED_CONFIG_H; its structure layouts would not match the plugin's"
make -j"$(nproc)" > "$out/build/make.log" 2>&1 || die "make failed; see $out/build/make.log"
make install DESTDIR="$out/destdir" > "$out/build/install.log" 2>&1 || die "make install failed; see $out/build/install.log"

install -m 0755 "$out/destdir/usr/sbin/opensm" "$out/opensm"
# The SA client the integration tests ask PathRecords and MultiPathRecords with.
gcc -O2 -Wall -Wextra -Werror -o "$out/sa-first-path" "$here/tools/sa-first-path.c" -libumad \
    || die "cannot build tools/sa-first-path.c"
"$here/make-deb.sh" "$out/opensm" "$out" || die "cannot build the Debian package"
echo "$stamp" > "$out/.build-stamp"
echo "build.sh: patched OpenSM at $out/opensm"
