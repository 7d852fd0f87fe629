#!/usr/bin/env bash
# Builds the osmroute:dev image from this tree. The build stage compiles
# offline from crates vendored here by the host's cargo (docker/vendor,
# not tracked): TLS-intercepting proxies and private registries then need
# configuring only on the host, not inside the build.
set -euo pipefail
cd "$(dirname "$0")/.."
docker/build-base.sh
cargo vendor --locked --versioned-dirs docker/vendor >/dev/null
docker build --force-rm --network host -f docker/Dockerfile -t osmroute:dev .
