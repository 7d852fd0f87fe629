#!/usr/bin/env bash
# Service `verify` (one-shot): waits for OpenSM to finish routing, reads the
# tables back from the simulated switches, runs `osmroute check` and
# ibdmchk on them and prints a report. Exits non-zero on any failure.
set -uo pipefail
. /usr/local/lib/osmroute/lib.sh
RUN=/run/osmroute
dir=$RUN/opensm
echo "verify: waiting for OpenSM to route the fabric"
until [ -e "$dir/opensm.log" ]; do sleep 1; done
wait_for_line "$dir/opensm.log" "SUBNET UP|No routing engine able" "${VERIFY_TIMEOUT:-900}" || {
    echo "FAIL: OpenSM did not bring the subnet up"
    tail -20 "$dir/opensm.log"
    exit 1
}
export SIMDIR=/tmp
echo
echo "osmroute container scenario: $(grep -c '^Switch' "$RUN/fabric.net") switches, $(grep -cE '^(Hca|Ca)' "$RUN/fabric.net") hosts"
# The package as installed: dpkg knows it, and the loader finds the plugin
# built for this OpenSM (what osmroute doctor checks).
dpkg-query -W -f='package: ${Package} ${Version} ${Status}\n' osmroute
doctor=$(osmroute doctor --opensm-conf "$dir/opensm.conf" 2>&1)
echo "$doctor" | sed 's/^/doctor: /'
if ! grep -q "libosmroute.so is built for OpenSM .*, as the installed OpenSM" <<<"$doctor"; then
    echo "verify: FAILED (the installed package's plugin is not where OpenSM loads it)"
    exit 1
fi
if verify_dla_run "$dir" osmroute; then
    echo "verify: passed"
else
    echo "verify: FAILED"
    exit 1
fi
