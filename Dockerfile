# upstash-exporter container image: multi-stage, Node 24 on Debian bookworm (slim), non-root,
# tini as PID 1 so SIGTERM reaches the exporter (it then saves its state and exits 0).
#
#   docker build -t upstash-exporter --build-arg REVISION=$(git rev-parse --short HEAD) .
#   docker run --rm -p 9824:9824 -v upstash-state:/var/lib/upstash-exporter \
#     -e QSTASH_TOKEN=... upstash-exporter
#
# Configuration is by environment variables (docs/configuration.md); secrets also from files
# (QSTASH_TOKEN_FILE, UPSTASH_API_KEY_FILE...). The state file lives on the volume
# /var/lib/upstash-exporter: keep it across restarts, or counters start again from zero.
# See docs/deployment.md.

# The base of every stage: the official Node 24 image. CI, which reaches no container registry,
# passes a locally made equivalent (deploy/container/make-base.sh) under another name.
ARG BASE_IMAGE=node:24-bookworm-slim

# 1. Build: every dependency, then the TypeScript compile.
FROM ${BASE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# 2. Production dependencies only, installed from the same lock file.
FROM ${BASE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 3. Runtime: the compiled code, production node_modules, package.json (the version is read
#    from it), tini, and the state directory owned by the unprivileged `node` user (uid 1000).
FROM ${BASE_IMAGE} AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/* \
  && mkdir -p /var/lib/upstash-exporter \
  && chown node:node /var/lib/upstash-exporter
ARG REVISION=unknown
ENV NODE_ENV=production \
    LISTEN_ADDRESS=0.0.0.0:9824 \
    STATE_FILE=/var/lib/upstash-exporter/state.json \
    UPSTASH_EXPORTER_REVISION=${REVISION}
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
VOLUME ["/var/lib/upstash-exporter"]
USER node
EXPOSE 9824
# Liveness on /-/healthy over plain HTTP, on the port of LISTEN_ADDRESS (no curl in slim
# images: node's fetch), without credentials: with basic auth in a web config file, list
# /-/healthy in its basic_auth_excluded_paths (docs/deployment.md). With TLS, override or
# disable this check.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["node", "-e", "const a = process.env.LISTEN_ADDRESS || ''; const port = a.slice(a.lastIndexOf(':') + 1) || '9824'; fetch('http://127.0.0.1:' + port + '/-/healthy', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1));"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--max-semi-space-size=2", "dist/cli.js"]
