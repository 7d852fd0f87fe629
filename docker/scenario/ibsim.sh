#!/usr/bin/env bash
# Service `ibsim`: generates the fabric (or takes $FABRIC, a mounted net
# file) and simulates it in remote mode on $IBSIM_PORT.
set -euo pipefail
RUN=/run/osmroute
mkdir -p "$RUN"
rm -f "$RUN/ibsim.ready" "$RUN/ibsim.log"
if [ -n "${FABRIC:-}" ]; then
    cp "$FABRIC" "$RUN/fabric.net"
else
    osmroute gen dragonfly --a "${DF_A:-4}" --h "${DF_H:-2}" --p "${DF_P:-2}" \
        --shuffle-ports --seed "${SEED:-1}" -o "$RUN/fabric.net"
fi
net=$RUN/fabric.net
nodes=$(grep -cE '^(Switch|Hca|Ca)' "$net")
switches=$(grep -cE '^Switch' "$net")
ports=$(($(grep -cE '^\[' "$net") + nodes))
ibsim -r -l "${IBSIM_PORT:-7070}" -s -n -N $((nodes + 16)) -S $((switches + 16)) -P $((ports + 64)) "$net" \
    >"$RUN/ibsim.log" 2>&1 &
pid=$!
until grep -q MaxMcastCap "$RUN/ibsim.log" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { cat "$RUN/ibsim.log"; exit 1; }
    sleep 1
done
touch "$RUN/ibsim.ready"
echo "ibsim: simulating $switches switches, $((nodes - switches)) hosts on port ${IBSIM_PORT:-7070}"
wait "$pid"
