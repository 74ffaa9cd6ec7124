#!/bin/bash
# The two designs of docs/design/network-per-release.md, side by side, by hand:
# (A) a namespace on a veth pair onto a bridge, dialled at its address;
# (B) a namespace served by pasta (Debian's passt), dialled at a loopback port it forwards;
# (0) the same server on the machine's loopback, as releases run without a namespace.
# A plain Caddy proxies to each (HTTP, keep-alive on: the edge's path without TLS);
# wrk loads the three in turn, ROUNDS times. Run as root; removes all it made.
# Usage: bash bench/netns-compare.sh [ROUNDS] [SECONDS]
set -eu
ROUNDS=${1:-4}
SECONDS_EACH=${2:-8}
WORK=$(mktemp -d /tmp/netns-compare-XXXXXX)
BR=rpcmp0
NET=10.85.0
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  ip netns del rpcmpA 2>/dev/null || true
  ip netns del rpcmpB 2>/dev/null || true
  ip link del "$BR" 2>/dev/null || true
  nft delete table ip rpcmp 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
command -v pasta >/dev/null || { echo "pasta is missing: apt-get install passt" >&2; exit 1; }
cat > "$WORK/server.js" <<'JS'
require('http').createServer((req, res) => res.end('ok\n')).listen(Number(process.argv[2] || 8080), process.argv[3] || '0.0.0.0');
JS
# (A)
start=$(date +%s%N)
ip link add "$BR" type bridge && ip addr add "$NET.1/24" dev "$BR" && ip link set "$BR" up
ip netns add rpcmpA
ip link add rpcmpA-h type veth peer name eth0 netns rpcmpA
ip link set rpcmpA-h master "$BR" up
ip -n rpcmpA -batch - <<IP
link set lo up
address add $NET.2/24 dev eth0
link set eth0 up
route add default via $NET.1
IP
echo "(A) bridge + one namespace made in $(( ($(date +%s%N) - start) / 1000000 )) ms"
printf 'table ip rpcmp {\n chain post {\n  type nat hook postrouting priority srcnat; policy accept;\n  ip saddr %s.0/24 oifname != "%s" masquerade\n }\n}\n' "$NET" "$BR" | nft -f -
nsenter --net=/run/netns/rpcmpA node "$WORK/server.js" 8080 & PIDS+=($!)
# (B)
start=$(date +%s%N)
ip netns add rpcmpB
pasta --config-net -q -t 18289:8080 -u none -T none -U none --netns /run/netns/rpcmpB --runas 0 -P "$WORK/pasta.pid"
echo "(B) namespace + pasta made in $(( ($(date +%s%N) - start) / 1000000 )) ms"
PIDS+=("$(cat "$WORK/pasta.pid")")
nsenter --net=/run/netns/rpcmpB node "$WORK/server.js" 8080 & PIDS+=($!)
# (0)
node "$WORK/server.js" 18290 127.0.0.1 & PIDS+=($!)
cat > "$WORK/Caddyfile" <<CADDY
{
  admin off
  auto_https off
}
:18201 {
  reverse_proxy 127.0.0.1:18290
}
:18202 {
  reverse_proxy $NET.2:8080
}
:18203 {
  reverse_proxy 127.0.0.1:18289
}
CADDY
caddy run --config "$WORK/Caddyfile" --adapter caddyfile >"$WORK/caddy.log" 2>&1 & PIDS+=($!)
sleep 2
for p in 18201 18202 18203; do curl -fsS "127.0.0.1:$p/" >/dev/null; done
echo "pasta's memory (PSS): $(awk '/^Pss:/ {print $2}' "/proc/$(cat "$WORK/pasta.pid")/smaps_rollup") kB"
echo "(A) outbound from the namespace: $(ip netns exec rpcmpA curl -s -o /dev/null -w '%{http_code}' "$(npm config get registry)")"
echo "(B) outbound from the namespace: $(ip netns exec rpcmpB curl -s -o /dev/null -w '%{http_code}' "$(npm config get registry)")"
for round in $(seq "$ROUNDS"); do
  for path in "0 18201" "A 18202" "B 18203"; do
    set -- $path
    out=$(wrk -t2 -c16 -d"${SECONDS_EACH}s" --latency "http://127.0.0.1:$2/")
    echo "round $round ($1): $(echo "$out" | awk '/Requests\/sec/ {r = $2} /^ +99%/ {p = $2} END {printf "%s req/s, p99 %s", r, p}')"
  done
done
