#!/usr/bin/env bash
# Builds a Debian base image locally, since no container registry is
# reachable: debootstrap (minbase) of RELEASE (bookworm or trixie; default
# bookworm) from the Debian mirror this machine's apt already uses, then
# `docker import`, tagged so that the Dockerfile's
# `FROM debian:RELEASE-slim` resolves without a pull.
# Does nothing when the image exists. Needs root (debootstrap).
#
#   docker/build-base.sh [RELEASE]
set -euo pipefail
RELEASE=${1:-bookworm}
TAG=${OSMROUTE_BASE_IMAGE:-debian:$RELEASE-slim}

if docker image inspect "$TAG" >/dev/null 2>&1; then
    echo "base image $TAG already present" >&2
    exit 0
fi
command -v debootstrap >/dev/null || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}

# The mirrors apt uses here (deb822 .sources or one-line lists).
sources=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null | grep -v '^[[:space:]]*#' || true)
mirror=$(grep -oE 'https?://[^ ]+/debian/?$|https?://[^ ]+/debian ' <<<"$sources" | head -1 | tr -d ' ')
security=$(grep -oE 'https?://[^ ]+/debian-security' <<<"$sources" | head -1)
mirror=${mirror:-http://deb.debian.org/debian}
security=${security:-http://deb.debian.org/debian-security}

root=$(mktemp -d /tmp/osmroute-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "debootstrap $RELEASE from $mirror into $root" >&2
# A debootstrap older than the release may lack its script; every current
# release bootstraps like sid.
script=""
[ -e "/usr/share/debootstrap/scripts/$RELEASE" ] || script=/usr/share/debootstrap/scripts/sid
debootstrap --variant=minbase "$RELEASE" "$root" "$mirror" $script >&2
cat >"$root/etc/apt/sources.list" <<LIST
deb $mirror $RELEASE main
deb $mirror $RELEASE-updates main
deb $security $RELEASE-security main
LIST
# Keep images small, as the official slim images do.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* "$root"/usr/share/man/*
tar -C "$root" -c . | docker import -c 'CMD ["bash"]' - "$TAG" >&2
echo "built base image $TAG" >&2
