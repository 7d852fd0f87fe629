#!/usr/bin/env bash
# Builds the osmroute image for a Debian release from this tree:
# osmroute:dev-RELEASE (and osmroute:dev for bookworm, the default).
# The build stage compiles offline from crates vendored here by the host's
# cargo (docker/vendor, not tracked): TLS-intercepting proxies and private
# registries then need configuring only on the host, not inside the build.
#
#   docker/build-image.sh [RELEASE]     # bookworm (default) or trixie
set -euo pipefail
cd "$(dirname "$0")/.."
RELEASE=${1:-bookworm}
docker/build-base.sh "$RELEASE"
cargo vendor --locked --versioned-dirs docker/vendor >/dev/null
tags=(-t "osmroute:dev-$RELEASE")
[ "$RELEASE" = bookworm ] && tags+=(-t osmroute:dev)
docker build --force-rm --network host --build-arg "DEBIAN=$RELEASE" -f docker/Dockerfile "${tags[@]}" .
