#!/bin/bash
# Packages a patched opensm binary as opensm-osmroute_VERSION_ARCH.deb:
#
#   opensm-patch/make-deb.sh OPENSM_BINARY OUTDIR
#
# The package diverts the distribution's /usr/sbin/opensm to
# /usr/sbin/opensm.stock (dpkg-divert) and installs the patched daemon in
# its place; removing it restores the stock daemon. Everything else (init
# scripts, libraries, man pages, configuration) stays the distribution's
# opensm package, whose exact version it requires: the patched daemon is
# built from the same upstream release and uses the same libopensm9.
# (Debian's own packaging cannot be rebuilt: the mirror has the orig
# tarball but not opensm_3.3.23-2.debian.tar.xz.)
set -euo pipefail

die() { echo "make-deb.sh: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: $0 OPENSM_BINARY OUTDIR"
binary=$1
out=$2
stock_version=$(dpkg-query -W -f='${Version}' opensm 2>/dev/null) || die "the opensm package is not installed; the patched daemon replaces its binary"
arch=$(dpkg --print-architecture)
version="${stock_version}+osmroute1"
pkg=$out/pkgroot
rm -rf "$pkg"
mkdir -p "$pkg/DEBIAN" "$pkg/usr/sbin" "$pkg/usr/share/doc/opensm-osmroute"
install -m 0755 "$binary" "$pkg/usr/sbin/opensm"
cat > "$pkg/usr/share/doc/opensm-osmroute/README" <<DOC
OpenSM $stock_version with osmroute's SA patches (the routing engine picks
the DLID a PathRecord or MultiPathRecord answers first). The patched
daemon is /usr/sbin/opensm; the distribution's is kept as
/usr/sbin/opensm.stock until this package is removed.
DOC
cat > "$pkg/DEBIAN/control" <<CTL
Package: opensm-osmroute
Version: $version
Architecture: $arch
Maintainer: osmroute <osmroute@localhost>
Depends: opensm (= $stock_version), libopensm9, libibumad3
Section: net
Priority: optional
Description: OpenSM whose SA answers paths with the routing engine's DLID
 Replaces /usr/sbin/opensm (diverted to /usr/sbin/opensm.stock) with
 OpenSM built from the same upstream release plus osmroute's patches:
 routing engines may choose the LIDs the SA answers first in PathRecord
 and MultiPathRecord responses. Without such an engine it behaves as the
 stock daemon.
CTL
cat > "$pkg/DEBIAN/preinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = install ] || [ "$1" = upgrade ]; then
    dpkg-divert --package opensm-osmroute --add --rename --divert /usr/sbin/opensm.stock /usr/sbin/opensm
fi
SH
cat > "$pkg/DEBIAN/postrm" <<'SH'
#!/bin/sh
set -e
if [ "$1" = remove ] || [ "$1" = purge ] || [ "$1" = abort-install ]; then
    dpkg-divert --package opensm-osmroute --remove --rename --divert /usr/sbin/opensm.stock /usr/sbin/opensm
fi
SH
chmod 0755 "$pkg/DEBIAN/preinst" "$pkg/DEBIAN/postrm"
rm -f "$out"/opensm-osmroute_*.deb
dpkg-deb --root-owner-group --build "$pkg" "$out/opensm-osmroute_${version}_${arch}.deb" > /dev/null
rm -rf "$pkg"
echo "make-deb.sh: $out/opensm-osmroute_${version}_${arch}.deb"
