#!/usr/bin/env bash
# Builds the Shortlink image with Podman from the repository's Dockerfile, on a base made from
# Debian's packages and the npm registry's Node 24 (base-image.sh) unless BASE_IMAGE names another
# (node:24-bookworm-slim where a registry is reachable).
#
#   deploy/podman/build.sh [IMAGE]      default IMAGE: localhost/shortlink:latest
#   BUILD_NETWORK=host deploy/podman/build.sh …   RUN steps on the host's network
#
# When the host trusts extra CAs for its outbound TLS (NODE_EXTRA_CA_CERTS, as behind an
# inspecting proxy), that bundle is mounted into the build for npm, and left out of the image.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

IMAGE=${1:-localhost/shortlink:latest}
BASE_IMAGE=${BASE_IMAGE:-localhost/shortlink-base:bookworm-node24}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/deploy/podman/containers.conf}

if [[ $BASE_IMAGE == localhost/shortlink-base:* ]] && ! podman image exists "$BASE_IMAGE"; then
  deploy/podman/base-image.sh "$BASE_IMAGE"
fi

extra=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  extra+=(--volume "$NODE_EXTRA_CA_CERTS:/run/build-ca.crt:ro" --build-arg NODE_EXTRA_CA_CERTS=/run/build-ca.crt)
fi

# BUILD_NETWORK=host: the build's RUN steps use the host's network instead of a bridge Podman
# creates (a new interface, which Chromium running beside it reports as ERR_NETWORK_CHANGED).
if [ -n "${BUILD_NETWORK:-}" ]; then
  extra+=(--network "$BUILD_NETWORK")
fi

# Docker format: the OCI image format has no HEALTHCHECK.
podman build --format docker --build-arg "BASE_IMAGE=$BASE_IMAGE" "${extra[@]}" --tag "$IMAGE" .
echo "build: $IMAGE, $(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1000000}')"
