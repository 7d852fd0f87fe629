#!/usr/bin/env bash
# Service `opensm`: the distribution's OpenSM with the plugin, talking to the
# `ibsim` service over TCP ($IBSIM_SERVER_NAME, $IBSIM_SERVER_PORT).
set -euo pipefail
RUN=/run/osmroute
dir=$RUN/opensm
rm -rf "$dir"
mkdir -p "$dir/cache"
until [ -e "$RUN/ibsim.ready" ]; do sleep 1; done
{
    cat "${OPENSM_CONF:-/etc/opensm/osmroute-scenario.conf}"
    echo "routing_engine ${ROUTING_ENGINE:-dla}"
    echo "log_file $dir/opensm.log"
    echo "dump_files_dir $dir"
} >"$dir/opensm.conf"
cd "$dir"   # umad2sim leaves its sys-PID/ tree in the working directory
export OSM_CACHE_DIR=$dir/cache
exec env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so opensm -F "$dir/opensm.conf"
