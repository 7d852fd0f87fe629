# Shared shell helpers for .ci/demo and .ci/bench-dla: running ibsim and the
# distribution's OpenSM with the plugin on a generated fabric. Sourced.

UMAD2SIM=${UMAD2SIM:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}

# start_ibsim NETFILE LOG: simulates NETFILE on socket $IBSIM_SOCKNAME,
# with limits raised for big fabrics; sets IBSIM_PID. IBSIM_LINEARCAP sets
# the switches' LFT size (ibsim -L; Debian's ibsim 0.10 gives 30,720
# entries, which caps OpenSM's LIDs; real switch ASICs hold 49,152).
start_ibsim() {
    local net=$1 log=$2 nodes switches ports
    nodes=$(grep -cE '^(Switch|Hca|Ca)' "$net")
    switches=$(grep -cE '^Switch' "$net")
    ports=$(( $(grep -cE '^\[' "$net") + nodes ))
    # shellcheck disable=SC2086 # an empty option is no word
    ibsim -s -n ${IBSIM_LINEARCAP:+-L $IBSIM_LINEARCAP} -N $((nodes + 16)) -S $((switches + 16)) -P $((ports + 64)) "$net" >"$log" 2>&1 &
    IBSIM_PID=$!
    # ibsim prints its limits once the fabric is parsed and the socket is up.
    wait_for_line "$log" "MaxMcastCap" 600 || { echo "ibsim did not start; see $log" >&2; return 1; }
}

# start_ibsim_live NETFILE LOG: start_ibsim with ibsim's console open on a
# FIFO ($SIMDIR/console, kept open by a sleeping writer so ibsim never sees
# end of file); ibsim_console sends it commands. Sets IBSIM_PID and
# CONSOLE_HOLDER_PID.
start_ibsim_live() {
    local net=$1 log=$2 nodes switches ports
    nodes=$(grep -cE '^(Switch|Hca|Ca)' "$net")
    switches=$(grep -cE '^Switch' "$net")
    ports=$(( $(grep -cE '^\[' "$net") + nodes ))
    CONSOLE="$SIMDIR/console"
    rm -f "$CONSOLE"
    mkfifo "$CONSOLE"
    sleep infinity >"$CONSOLE" &
    CONSOLE_HOLDER_PID=$!
    # shellcheck disable=SC2086 # an empty option is no word
    ibsim -s ${IBSIM_LINEARCAP:+-L $IBSIM_LINEARCAP} -N $((nodes + 16)) -S $((switches + 16)) -P $((ports + 64)) "$net" <"$CONSOLE" >"$log" 2>&1 &
    IBSIM_PID=$!
    wait_for_line "$log" "MaxMcastCap" 600 || { echo "ibsim did not start; see $log" >&2; return 1; }
}

# ibsim_console COMMAND: e.g. ibsim_console 'unlink "sw1"[3]'.
ibsim_console() {
    echo "$1" >"$CONSOLE"
}

# wait_for_pass LOG DONE: waits until OpenSM's LOG has more than DONE
# routing passes ("tables configured on all switches"), the last one
# finished (as many "SUBNET UP") and no new pass for 5 s; prints the count.
wait_for_pass() {
    local log=$1 done=$2 count up quiet=0 waited=0
    while :; do
        sleep 1
        waited=$((waited + 1))
        [ "$waited" -lt 600 ] || { echo "no routing pass in $log after 600 s" >&2; return 1; }
        count=$(grep -c "tables configured on all switches" "$log" || true)
        up=$(grep -c "SUBNET UP" "$log" || true)
        if [ "$count" -gt "$done" ] && [ "$up" -ge "$count" ]; then
            if [ "$count" = "${last:-}" ]; then quiet=$((quiet + 1)); else quiet=0; fi
            [ "$quiet" -lt 5 ] || break
        fi
        last=$count
    done
    echo "$count"
}

# start_opensm CONF LOG: runs opensm -F CONF under umad2sim with the plugin
# from target/release, its cache (guid2lid, neighbors) next to CONF rather
# than in /var/cache/opensm; sets OPENSM_PID. $OPENSM names another OpenSM
# executable (e.g. opensm-patch's build).
start_opensm() {
    local conf=$1 out=$2
    local lib="$PWD/target/release"
    mkdir -p "$(dirname "$conf")/cache"
    (cd "$(dirname "$conf")" && OSM_CACHE_DIR="$(dirname "$conf")/cache" \
        LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        exec env LD_PRELOAD="$UMAD2SIM" "${OPENSM:-opensm}" -F "$conf") >"$out" 2>&1 &
    OPENSM_PID=$!
}

# wait_for_line FILE PATTERN SECONDS: waits until FILE has a line matching PATTERN.
wait_for_line() {
    local file=$1 pattern=$2 limit=$3 waited=0
    until grep -qE "$pattern" "$file" 2>/dev/null; do
        sleep 1
        waited=$((waited + 1))
        [ "$waited" -lt "$limit" ] || return 1
    done
}

# opensm_conf DIR ENGINE: an opensm.conf for a run in DIR with ENGINE.
opensm_conf() {
    local dir=$1 engine=$2 flags=${3:-0x43}
    cat <<CONF
event_plugin_name osmroute
routing_engine $engine
qos TRUE
log_file $dir/opensm.log
log_flags $flags
force_log_flush TRUE
dump_files_dir $dir
CONF
}

# tool CMD ARGS...: a diag tool talking to the simulation, run in $SIMDIR
# because umad2sim leaves a fake sysfs tree (sys-PID/) in the working directory.
tool() {
    (cd "${SIMDIR:-/tmp}" && LD_PRELOAD="$UMAD2SIM" "$@" 2>/dev/null </dev/null)
}

# log_seconds LINE: seconds since midnight of an OpenSM log line
# ("Nov 22 15:02:06 386154 [..]").
log_seconds() {
    awk '{ split($3, t, ":"); printf "%.6f\n", t[1] * 3600 + t[2] * 60 + t[3] + $4 / 1e6 }' <<<"$1"
}

# routing_interval LOG: seconds from OpenSM's first "building routing with"
# to its first "tables configured on all switches" line, or "-".
routing_interval() {
    local start end
    start=$(grep -m1 "building routing with" "$1" || true)
    end=$(grep -m1 "tables configured on all switches" "$1" || true)
    if [ -n "$start" ] && [ -n "$end" ]; then
        awk -v a="$(log_seconds "$start")" -v b="$(log_seconds "$end")" 'BEGIN { printf "%.3f\n", b - a }'
    else
        echo -
    fi
}

stop_pid() {
    [ -n "${1:-}" ] || return 0
    kill "$1" 2>/dev/null || return 0
    sleep 1
    kill -9 "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

# readback_tables DIR: reads every switch's LFT and SL2VL tables back from
# the simulated switches (MADs, as on real hardware) into DIR as
#   readback-lfts.dump   OpenSM's opensm-lfts.dump format (for osmroute check)
#   readback.fdbs        OpenSM's opensm.fdbs format (for ibdmchk -f)
#   readback-sl2vl.txt   ibdmchk's -d format
readback_tables() {
    local dir=$1 guid ports lid out
    : >"$dir/readback-lfts.dump"
    : >"$dir/readback.fdbs"
    : >"$dir/readback-sl2vl.txt"
    tool ibswitches | awk '{ for (i = 1; i <= NF; i++) { if ($i == "ports") p = $(i+1); if ($i == "lid") l = $(i+1) } print $3, p, l }' |
    while read -r guid ports lid; do
        tool ibroute "$lid" | awk -v guid="$guid" -v lfts="$dir/readback-lfts.dump" -v fdbs="$dir/readback.fdbs" '
            /^Unicast lids/ { sub(/\(/, "(\047"); sub(/\):$/, "\047):"); print >> lfts
                              print "dump_ucast_routes: Switch " guid >> fdbs
                              print "LID    : Port : Hops : Optimal" >> fdbs }
            /^0x[0-9a-fA-F]+ [0-9]+ / { print $1, $2 >> lfts; printf "%s : %s  : 00   : yes\n", $1, $2 >> fdbs }'
        for out in $(seq 1 "$ports"); do
            tool smpquery sl2vl "$lid" "$out" | awk -v guid="$guid" '
                /^ports: in/ { gsub(/[,:|]/, " "); n = split($0, f, " ")
                               line = guid " " f[3] " " f[5]
                               for (i = 0; i < 8; i++) line = line sprintf(" 0x%x%x", f[6 + 2*i], f[7 + 2*i])
                               print line }' >>"$dir/readback-sl2vl.txt"
        done
    done
}

# verify_dla_run DIR OSMROUTE: checks a finished OpenSM run with dla in DIR
# (opensm.log and dumps there) against the simulated switches: reads the
# tables back, runs `osmroute check` and ibdmchk on them, prints one line
# per check. Returns the number of failed checks.
verify_dla_run() {
    local dir=$1 osmroute=$2 failures=0 line errs ibdm vls
    fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
    pass() { echo "ok:   $*"; }

    readback_tables "$dir"
    # The read-back directory: OpenSM's topology, the LFTs and SL2VL tables
    # as the switches hold them, and the SLs the plugin answers path_sl with.
    mkdir -p "$dir/readback"
    cp "$dir/opensm-subnet.lst" "$dir/readback/"
    cp "$dir/readback-lfts.dump" "$dir/readback/opensm-lfts.dump"
    cp "$dir/readback-sl2vl.txt" "$dir/readback/osmroute-sl2vl.txt"
    cp "$dir/osmroute-path-sl.txt" "$dir/readback/" 2>/dev/null || true

    line=$(grep -m1 -o "osmroute: dla: routed .*" "$dir/opensm.log" || true)
    if grep -q "dla tables configured on all switches" "$dir/opensm.log"; then
        pass "OpenSM routed with dla: ${line#osmroute: }"
    else
        fail "OpenSM did not route with dla (see $dir/opensm.log)"
    fi
    errs=$(grep -c "ERR" "$dir/opensm.log" || true)
    if [ "$errs" -eq 0 ]; then pass "no ERR lines in OpenSM's log"; else
        fail "$errs ERR lines in OpenSM's log"
        grep -m5 ERR "$dir/opensm.log"
    fi

    if "$osmroute" check "$dir/readback" --max-hops 3 >"$dir/check.txt" 2>&1; then
        pass "osmroute check on the read-back tables: all routes arrive, <= 3 switch hops, no credit loops"
    else
        fail "osmroute check on the read-back tables (report: $dir/check.txt)"
    fi
    sed 's/^/      /' "$dir/check.txt" | head -40

    ibdm=$(cd "$dir" && ibdmchk -s opensm-subnet.lst -f readback.fdbs -m opensm.mcfdbs \
        -c osmroute-path-sl.txt -d readback-sl2vl.txt 2>&1 || true)
    echo "$ibdm" >"$dir/ibdmchk.txt"
    vls=$(grep -o "[0-9]* SLs, [0-9]* VLs used" <<<"$ibdm" || true)
    if grep -q "no credit loops found" <<<"$ibdm" && ! grep -q "^-E-" <<<"$ibdm"; then
        pass "ibdmchk on the read-back tables: $vls, no credit loops, no errors"
    else
        fail "ibdmchk on the read-back tables (report: $dir/ibdmchk.txt)"
    fi
    return "$failures"
}
