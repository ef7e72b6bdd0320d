#!/usr/bin/env bash
# Builds the executor image for the docker exec backend without any registry: a minimal Debian
# bookworm root filesystem with python3 (mmdebstrap, from the apt sources this machine already
# has), imported with `docker import`. Cached: does nothing when the image already exists.
# Usage: scripts/build-exec-image.sh [tag]   (default dreact-exec:local; FORCE=1 rebuilds)
set -euo pipefail
TAG="${1:-${DREACT_EXEC_IMAGE:-dreact-exec:local}}"
if [[ "${FORCE:-0}" != "1" ]] && docker image inspect "$TAG" >/dev/null 2>&1; then
  echo "build-exec-image: $TAG already exists (FORCE=1 rebuilds)"
  exit 0
fi
command -v mmdebstrap >/dev/null || { echo "build-exec-image: mmdebstrap is not installed (apt-get install mmdebstrap)" >&2; exit 1; }
# Default: the Debian mirror the machine's apt already uses (deb.debian.org); DEBIAN_MIRROR overrides.
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
echo "build-exec-image: mmdebstrap bookworm (${MIRROR:-default mirror}) -> $TAG"
mmdebstrap --variant=apt --include=python3 --quiet bookworm "$TMP/rootfs.tar" ${MIRROR:+"$MIRROR"}
docker import --change 'CMD ["/usr/bin/python3"]' --change 'ENV PYTHONDONTWRITEBYTECODE=1' "$TMP/rootfs.tar" "$TAG" >/dev/null
echo "build-exec-image: built $TAG"
