#!/usr/bin/env bash
# Builds a base image like node:24-bookworm-slim from parts this machine can reach: Debian
# bookworm from Debian's own mirror (debootstrap, with tini and CA certificates), Node 24 from
# the npm registry's `node` package (the project's devDependency, already in node_modules), and
# npm from the machine's own npm installation. For machines without access to a container
# registry; anywhere else the Dockerfile's default base, node:24-bookworm-slim, does the same.
#
#   deploy/podman/base-image.sh [IMAGE]     default IMAGE: localhost/shortlink-base:bookworm-node24
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

IMAGE=${1:-localhost/shortlink-base:bookworm-node24}
ROOTFS=${SHORTLINK_ROOTFS:-/var/tmp/shortlink-rootfs}
# The Debian mirror this machine's apt already uses (DEBIAN_MIRROR to choose another).
# Some of these files may be absent (sed then exits 2): only what it prints counts.
MIRROR=${DEBIAN_MIRROR:-$({ sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p; s/^deb \([^ ]*\/debian\) .*/\1/p' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null || true; } | head -1)}
[ -n "$MIRROR" ] || { echo "base-image: no Debian mirror in the apt sources; set DEBIAN_MIRROR" >&2; exit 1; }
NODE_BIN=node_modules/node/bin/node
NPM_DIR=${NPM_DIR:-$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/deploy/podman/containers.conf}

[ -x "$NODE_BIN" ] || { echo "base-image: $NODE_BIN is missing; run npm install first" >&2; exit 1; }
[ -f "$NPM_DIR/bin/npm-cli.js" ] || { echo "base-image: no npm found at $NPM_DIR" >&2; exit 1; }

if [ ! -x "$ROOTFS/usr/bin/tini" ]; then
  rm -rf "$ROOTFS"
  debootstrap --variant=minbase --include=ca-certificates,tini bookworm "$ROOTFS" "$MIRROR"
fi

# A throwaway copy, so that the debootstrapped tree stays reusable.
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp -a "$ROOTFS" "$WORK/rootfs"
R="$WORK/rootfs"
# Nothing the image needs at run time: package lists, caches, documentation.
rm -rf "$R"/var/lib/apt/lists/* "$R"/var/cache/apt/*.bin "$R"/var/cache/apt/archives/*.deb "$R"/usr/share/doc/* "$R"/usr/share/man/* "$R"/usr/share/info/*
install -D -m 0755 "$NODE_BIN" "$R/usr/local/bin/node"
mkdir -p "$R/usr/local/lib/node_modules"
cp -a "$NPM_DIR" "$R/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$R/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$R/usr/local/bin/npx"
# The official node images run as `node` (uid 1000); so does this one.
chroot "$R" /usr/sbin/groupadd --gid 1000 node
chroot "$R" /usr/sbin/useradd --uid 1000 --gid node --create-home --shell /bin/bash node

tar -C "$R" -c . | podman import --change 'CMD ["node"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$IMAGE" >/dev/null
echo "base-image: built $IMAGE (node $("$NODE_BIN" --version), npm $(node "$NPM_DIR/bin/npm-cli.js" --version 2>/dev/null || echo '?'))"
