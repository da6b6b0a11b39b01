#!/usr/bin/env bash
# Paired light-request throughput of two idvd binaries (issue #36 "at least as fast as last
# month's binary"): each binary serves a fresh SQLite file on a free loopback port, `wrk` loads one
# route for DURATION seconds, the server stops; A and B alternate (A B, B A, A B, …) so the
# machine's drift and other load fall on both, and the ratio B/A is read pair by pair.
#
# usage: bench/light-pair.sh OLD_IDVD NEW_IDVD [PAIRS=6] [ROUTE=sessions|healthz] [DURATION=5]
#   env: WRK_THREADS (2), WRK_CONNECTIONS (8), PIN (a taskset CPU list for the servers, e.g. 0;
#        wrk then runs on the other CPUs), NEW_SET (extra `--set K=V` words for NEW only).
# Prints each run's req/s and p99 as wrk printed them, then req/s min/median/max of each binary
# and new/old per pair min/median/max, with the load average before and after.
#
# NEW gets `limits.sessions_per_client=0`: the old binary has no per-client session limit, and
# with it on most POSTs from one loopback address would be 429s. Both log every request to
# stderr (sent to /dev/null) as they do by default: the log line is part of the request's cost.
# `POST /v1/sessions` sends `{}` with `Content-Type: application/json`.
set -euo pipefail
OLD=${1:?old idvd}; NEW=${2:?new idvd}; PAIRS=${3:-6}; ROUTE=${4:-sessions}; DURATION=${5:-5}
THREADS=${WRK_THREADS:-2}; CONNS=${WRK_CONNECTIONS:-8}
work=$(mktemp -d "${TMPDIR:-/tmp}/light-pair.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat > "$work/post.lua" <<'EOF'
wrk.method = "POST"
wrk.body = "{}"
wrk.headers["Content-Type"] = "application/json"
EOF
case "$ROUTE" in
  sessions) path=/v1/sessions; script=(-s "$work/post.lua") ;;
  healthz) path=/healthz; script=() ;;
  *) echo "ROUTE is sessions or healthz" >&2; exit 2 ;;
esac
pin=(); wrkpin=()
if [[ -n "${PIN:-}" ]]; then
  pin=(taskset -c "$PIN")
  other=$(python3 -c "import os,sys; p={int(c) for c in sys.argv[1].split(',')}; print(','.join(str(c) for c in sorted(os.sched_getaffinity(0)) if c not in p) or sys.argv[1])" "$PIN")
  wrkpin=(taskset -c "$other")
fi

# run LABEL BINARY [SET...]: one server, one wrk run; appends "LABEL req/s" to $work/rates.
run() {
  local label=$1 bin=$2; shift 2
  local dir; dir=$(mktemp -d "$work/run.XXXXXX")
  local sets=(--set documents.warm_up=false)
  for kv in "$@"; do sets+=(--set "$kv"); done
  : > "$dir/ready"   # exists before the server starts, so the poll below never reads a missing file
  IDVD_KEY_DIR="$dir/keys" XDG_STATE_HOME="$dir/state" "${pin[@]}" "$bin" serve --port 0 --db "$dir/idvd.sqlite" "${sets[@]}" \
    > "$dir/ready" 2>/dev/null &
  local pid=$!
  local port=""
  for _ in $(seq 1 200); do
    port=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$dir/ready" | head -1)
    [[ -n "$port" ]] && break
    sleep 0.05
  done
  [[ -n "$port" ]] || { echo "$label: no ready line" >&2; kill "$pid"; exit 1; }
  local out
  out=$("${wrkpin[@]}" wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" --latency "${script[@]}" "http://127.0.0.1:$port$path")
  kill -TERM "$pid"; wait "$pid" || true
  local rps p99 non2xx
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
  printf '%-4s %s req/s  p99 %s%s\n' "$label" "$rps" "$p99" "${non2xx:+  non-2xx $non2xx}"
  echo "$label $rps" >> "$work/rates"
  rm -rf "$dir"
}

echo "light-pair: $path, wrk -t$THREADS -c$CONNS -d${DURATION}s, $PAIRS pairs${PIN:+, servers on CPU $PIN}; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "old: $OLD"; echo "new: $NEW"
read -r -a newset <<<"${NEW_SET:-}"
for i in $(seq 1 "$PAIRS"); do
  if (( i % 2 == 1 )); then run old "$OLD"; run new "$NEW" limits.sessions_per_client=0 "${newset[@]}"
  else run new "$NEW" limits.sessions_per_client=0 "${newset[@]}"; run old "$OLD"; fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/rates" <<'EOF'
import statistics, sys
old, new = [], []
for line in open(sys.argv[1]):
    label, rate = line.split()
    (old if label == "old" else new).append(float(rate))
def mmm(xs): return "%.0f / %.0f / %.0f" % (min(xs), statistics.median(xs), max(xs))
ratios = [n / o for o, n in zip(old, new)]
print("old req/s min/median/max: " + mmm(old))
print("new req/s min/median/max: " + mmm(new))
print("new/old per pair min/median/max: %.2f / %.2f / %.2f" % (min(ratios), statistics.median(ratios), max(ratios)))
EOF
