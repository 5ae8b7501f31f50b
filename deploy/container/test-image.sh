#!/usr/bin/env bash
# Builds the real Dockerfile (on a locally made base when no registry is reachable) and runs the
# image against the emulator on the host (--network=host, loopback only), printing one line per
# check and exiting non-zero if any fails. Needs podman, runc, debootstrap (CI installs them) and
# `npm run build` (the emulator runs from dist/ on the host).
#   deploy/container/test-image.sh
# Without podman it skips with a message, except under CI=true, where that is a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
here=deploy/container
check_js="$here/check.mjs"

if ! command -v podman >/dev/null; then
  if [ "${CI:-}" = true ]; then echo "FAIL podman is not installed (CI=true: apt-get install podman buildah runc debootstrap uidmap)"; exit 1; fi
  echo "SKIP podman is not installed: apt-get install podman buildah runc debootstrap uidmap, then run $0"
  exit 0
fi

# runc, and ulimits a sandbox without CAP_SYS_RESOURCE accepts (docs/deployment.md). Without
# systemd podman logs that it cannot arm the HEALTHCHECK timer: kept in podman.log, the check
# itself runs with `podman healthcheck run`.
podman=(podman --runtime runc)
ulimits=(--ulimit nofile=20000:20000 --ulimit nproc=32768:32768)
image=localhost/upstash-exporter:ci-test
run_id="upx-test-$$"
volume="$run_id-state"
token=ci-test-qstash-token
email=ci@example.com
api_key=ci-test-api-key
failures=0
started_all=$(date +%s)
work="$(mktemp -d)"
pids=()

cleanup() {
  touch "$work/stop-traffic"
  "${podman[@]}" rm -f -t 0 "$run_id-1" "$run_id-2" >/dev/null 2>&1
  "${podman[@]}" volume rm -f "$volume" >/dev/null 2>&1
  "${podman[@]}" rmi -f "$image" >/dev/null 2>&1
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
elapsed_ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# 1. The base: the official node:24-bookworm-slim where a registry answers, else a local one.
base="${BASE_IMAGE:-}"
if [ -z "$base" ]; then
  t=$(date +%s%N)
  base=$(bash "$here/make-base.sh" 2>"$work/base.log") || { fail "base image (see below)"; cat "$work/base.log"; exit 1; }
  pass "base image $base ($(elapsed_ms "$t") ms)"
fi

# 2. The real Dockerfile; the host's CA bundle is mounted for npm's TLS proxy, nothing else differs.
printf 'cafile=/etc/ssl/certs/ca-certificates.crt\n' >"$work/npmrc"
t=$(date +%s%N)
if "${podman[@]}" build --format docker --network=host --pull=never "${ulimits[@]}" \
  --build-arg BASE_IMAGE="$base" --build-arg REVISION="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  -v /etc/ssl/certs:/etc/ssl/certs:ro -v "$work/npmrc:/root/.npmrc:ro" \
  -t "$image" . >"$work/build.log" 2>&1; then
  pass "image built from Dockerfile ($(elapsed_ms "$t") ms)"
else
  fail "image build"; tail -40 "$work/build.log"; exit 1
fi
size=$("${podman[@]}" image inspect "$image" --format '{{.Size}}')
pass "image size $((size / 1024 / 1024)) MiB"

# 3. The emulator and a destination on the host.
emu_port=$(node "$check_js" port); dest_port=$(node "$check_js" port); exporter_port=$(node "$check_js" port)
emu="http://127.0.0.1:$emu_port"
node dist/cli.js emulator --listen-address "127.0.0.1:$emu_port" --qstash-token "$token" --upstash-email "$email" --upstash-api-key "$api_key" >"$work/emulator.log" 2>&1 &
pids+=($!)
node "$check_js" destination "$dest_port" &
pids+=($!)
for _ in $(seq 100); do curl_ok=$(node -e "fetch('$emu/__emulator/knobs').then(()=>console.log(1),()=>console.log(0))"); [ "$curl_ok" = 1 ] && break; sleep 0.1; done

# start_exporter NAME [more podman run options]
start_exporter() {
  "${podman[@]}" run -d --name "$1" --network=host --read-only --tmpfs /tmp "${ulimits[@]}" \
    -v "$volume:/var/lib/upstash-exporter" \
    -e LISTEN_ADDRESS="127.0.0.1:$exporter_port" -e POLL_INTERVAL=1s -e LOGS_INGESTION_DELAY=500ms -e LOGS_OVERLAP=1s \
    -e QSTASH_URL="$emu" -e QSTASH_TOKEN="$token" \
    -e UPSTASH_MANAGEMENT_URL="$emu" -e UPSTASH_EMAIL="$email" -e UPSTASH_API_KEY="$api_key" \
    "${@:2}" "$image" >/dev/null 2>>"$work/podman.log"
}
exporter="http://127.0.0.1:$exporter_port"

# 4. First container: read-only root with a tmpfs, state on a volume.
start_exporter "$run_id-1" || { fail "container start"; exit 1; }
if node "$check_js" wait-ready "$exporter" 60; then pass "read-only container with a tmpfs is ready"; else fail "container never ready"; "${podman[@]}" logs "$run_id-1" | tail -20; exit 1; fi
# Traffic from now on: without state the exporter counts from its start, so the emulator's
# ground truth is exactly what it must count.
node "$check_js" traffic "$emu" "$token" "http://127.0.0.1:$dest_port" "$work/stop-traffic" &
pids+=($!)
if node "$check_js" collectors "$exporter" logs schedules account search vector; then pass "/metrics has data from every collector"; else fail "/metrics lacks a collector"; fi
uid=$("${podman[@]}" exec "$run_id-1" id -u)
if [ "$uid" != 0 ]; then pass "runs as a non-root user (uid $uid)"; else fail "runs as root"; fi
if "${podman[@]}" healthcheck run "$run_id-1" >/dev/null 2>&1; then pass "HEALTHCHECK passes"; else fail "HEALTHCHECK fails"; fi
# Until the first events are counted (ingestion delay 500 ms).
before=0
for _ in $(seq 40); do before=$(node "$check_js" events "$exporter"); [ "$before" -gt 0 ] && break; sleep 0.5; done

# 5. SIGTERM: exit 0 within 10 s, state saved.
t=$(date +%s%N)
"${podman[@]}" stop -t 10 "$run_id-1" >/dev/null 2>>"$work/podman.log"
stop_ms=$(elapsed_ms "$t")
code=$("${podman[@]}" inspect "$run_id-1" --format '{{.State.ExitCode}}')
if [ "$code" = 0 ] && [ "$stop_ms" -lt 10000 ]; then pass "SIGTERM: exit status 0 after $stop_ms ms"; else fail "SIGTERM: exit status $code after $stop_ms ms"; fi
state="$("${podman[@]}" volume inspect "$volume" --format '{{.Mountpoint}}')/state.json"
if grep -q '"format":"upstash-exporter-state"' "$state" 2>/dev/null; then pass "state saved on the volume ($(wc -c <"$state") bytes)"; else fail "no state file on the volume"; fi

# 6. A new container on the same volume continues the counters: no reset, nothing twice. This
#    one runs with basic auth (a web config file) leaving the health endpoints open, as
#    docs/deployment.md describes: the HEALTHCHECK and a probe without credentials still pass.
sleep 2
scrape_password="ci-scrape-password"
printf 'basic_auth_users:\n  prometheus: "%s"\nbasic_auth_excluded_paths: [/-/healthy, /-/ready]\n' \
  "$(node "$check_js" bcrypt "$scrape_password")" >"$work/web.yml"
chmod 644 "$work/web.yml"
start_exporter "$run_id-2" -v "$work/web.yml:/etc/upstash-exporter/web.yml:ro" \
  -e WEB_CONFIG_FILE=/etc/upstash-exporter/web.yml || { fail "second container start"; exit 1; }
if node "$check_js" wait-ready "$exporter" 60; then pass "second container, basic auth on: ready, /-/ready answered without credentials"; else fail "second container never ready"; "${podman[@]}" logs "$run_id-2" | tail -20; fi
if "${podman[@]}" healthcheck run "$run_id-2" >/dev/null 2>&1; then pass "HEALTHCHECK passes with basic auth on"; else fail "HEALTHCHECK fails with basic auth on"; fi
status=$(node "$check_js" status "$exporter/metrics")
if [ "$status" = 401 ]; then pass "basic auth on: /metrics without credentials is 401"; else fail "basic auth on: /metrics without credentials is $status"; fi
export CHECK_BASIC_AUTH="prometheus:$scrape_password"
after_start=$(node "$check_js" events "$exporter")
if [ "$after_start" -ge "$before" ] && [ "$before" -gt 0 ]; then pass "counters continue after the restart ($before before, $after_start after)"; else fail "counters reset ($before before, $after_start after)"; fi
touch "$work/stop-traffic"
total=$(node "$check_js" settled "$emu")
if counted=$(node "$check_js" wait-events "$exporter" "$total" 60); then pass "every event counted once across the restart ($counted = the emulator's ground truth)"; else fail "counted $counted events, the emulator's ground truth is $total ($(node -e "fetch('$emu/__emulator/ground-truth').then(r=>r.json()).then(t=>console.log(JSON.stringify(t.byState)))"))"; "${podman[@]}" logs "$run_id-2" 2>&1 | grep -v '"level":30' | tail -5; fi
"${podman[@]}" stop -t 10 "$run_id-2" >/dev/null 2>>"$work/podman.log"

echo "container checks took $(( $(date +%s) - started_all )) s"
if [ "$failures" -gt 0 ]; then echo "$failures container check(s) failed"; exit 1; fi
echo "all container checks passed"
