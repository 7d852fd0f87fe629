#!/usr/bin/env bash
# CI's Docker step: for Debian 12 (bookworm) and 13 (trixie), builds the
# base and osmroute images, runs the dla scenario from scratch (`run --rm
# verify`), cleans up, and fails if a scenario fails. Without a reachable
# Docker engine it says so loudly and fails, unless
# OSMROUTE_ALLOW_NO_DOCKER=1.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! docker info >/dev/null 2>&1; then
    echo "########################################################################" >&2
    echo "## NO DOCKER ENGINE REACHABLE: the container scenario did NOT run.    ##" >&2
    echo "########################################################################" >&2
    [ "${OSMROUTE_ALLOW_NO_DOCKER:-0}" = 1 ] && exit 0
    exit 1
fi
if docker compose version >/dev/null 2>&1; then
    compose() { docker compose -f docker/compose.yaml -p "osmroute-ci-$release" "$@"; }
elif command -v docker-compose >/dev/null; then
    compose() { docker-compose -f docker/compose.yaml -p "osmroute-ci-$release" "$@"; }
else
    echo "neither 'docker compose' nor 'docker-compose' found; install docker-compose" >&2
    exit 1
fi

cleanup() {
    compose logs --no-color >"${TMPDIR:-/tmp}/osmroute-docker-scenario-$release.log" 2>&1 || true
    compose down -v --remove-orphans >/dev/null 2>&1 || true
}
# Debian 12 and 13: the package built and installed on each, OpenSM 3.3.23
# as each release ships it.
for release in ${OSMROUTE_DEBIAN_RELEASES:-bookworm trixie}; do
    export OSMROUTE_IMAGE="osmroute:dev-$release"
    compose down -v --remove-orphans >/dev/null 2>&1 || true
    trap cleanup EXIT
    echo "== building the osmroute image on Debian $release" >&2
    docker/build-image.sh "$release"
    echo "== running the dla scenario in containers on Debian $release" >&2
    compose run --rm verify
    cleanup
    trap - EXIT
done
