# A one-node Slurm cluster on this machine, for tests/slurm/test_slurm.sh and
# tests/bench/bench_slurm.sh (source this file). Debian's munge, slurmctld, slurmd and
# slurm-client (scripts/install-deps.sh); root only (slurmd runs jobs as their user and
# slurmctld as SlurmUser=root here). Everything lives in one temporary directory: its own
# munge key and socket, its own slurm.conf on loopback with two free ports, its own state,
# spool, pid and log files; so it never touches a Slurm or munge the machine may run.
#
#   slurm_cluster_missing      prints why the cluster cannot start (nothing: it can)
#   slurm_cluster_start DIR    starts it under DIR (created), exports SLURM_CONF
#   slurm_cluster_stop         cancels its jobs, stops every daemon it started, by pid

slurm_cluster_missing() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "not root (slurmd must run jobs as their user; CI runs as root)"
        return
    fi
    local p missing=()
    for p in munged slurmctld slurmd sbatch squeue scancel sinfo python3; do
        command -v "$p" > /dev/null || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "missing ${missing[*]} (scripts/install-deps.sh installs munge, slurmctld, slurmd, slurm-client)"
    fi
}

# Two TCP ports nothing listens on now (held open together, so they differ).
_slurm_free_ports() {
    python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))'
}

_slurm_pids=()      # the daemons, in the order to stop them
_slurm_stepds=""    # slurmstepd processes that were there before we started (not ours)

slurm_cluster_start() {
    SLURM_DIR=$1
    mkdir -p "$SLURM_DIR"/{state,spool}
    chmod 700 "$SLURM_DIR"
    _slurm_stepds=" $( (pgrep -x slurmstepd || true) | tr "\n" " ") "
    local ports ctld_port d_port
    ports=$(_slurm_free_ports)
    ctld_port=${ports% *} d_port=${ports#* }
    head -c 1024 /dev/urandom > "$SLURM_DIR/munge.key"
    chmod 400 "$SLURM_DIR/munge.key"
    # --force: munged refuses a key or socket directory that looks insecure to it (/tmp).
    munged --key-file="$SLURM_DIR/munge.key" --socket="$SLURM_DIR/munge.sock" \
        --pid-file="$SLURM_DIR/munged.pid" --log-file="$SLURM_DIR/munged.log" \
        --seed-file="$SLURM_DIR/munged.seed" --force
    _slurm_pids+=("$(cat "$SLURM_DIR/munged.pid")")
    cat > "$SLURM_DIR/slurm.conf" <<CONF
ClusterName=ckhosttest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$SLURM_DIR/munge.sock
CredType=cred/munge
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
KillWait=10
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF=$SLURM_DIR/slurm.conf
    slurmctld -f "$SLURM_CONF"
    _slurm_wait_for_file "$SLURM_DIR/slurmctld.pid" && _slurm_pids=("$(cat "$SLURM_DIR/slurmctld.pid")" "${_slurm_pids[@]}")
    slurmd -f "$SLURM_CONF" -N localhost
    _slurm_wait_for_file "$SLURM_DIR/slurmd.pid" && _slurm_pids=("$(cat "$SLURM_DIR/slurmd.pid")" "${_slurm_pids[@]}")
    # Ready when the node is idle.
    local i
    for i in $(seq 100); do
        [ "$(sinfo -h -n localhost -o %T 2>/dev/null)" = idle ] && return 0
        sleep 0.2
    done
    echo "slurm_cluster_start: the node did not become idle in 20 s; logs in $SLURM_DIR" >&2
    return 1
}

_slurm_wait_for_file() {
    local i
    for i in $(seq 100); do
        [ -s "$1" ] && return 0
        sleep 0.1
    done
    echo "slurm_cluster_start: no $1 after 10 s" >&2
    return 1
}

_slurm_alive() { [ -d "/proc/$1" ]; }

slurm_cluster_stop() {
    [ -n "${SLURM_CONF:-}" ] && scancel --full --quiet --partition=debug 2> /dev/null || true
    local pid i stepd
    for pid in "${_slurm_pids[@]}"; do
        kill -TERM "$pid" 2> /dev/null || continue
        for i in $(seq 50); do _slurm_alive "$pid" || break; sleep 0.1; done
        _slurm_alive "$pid" && kill -KILL "$pid" 2> /dev/null
    done
    _slurm_pids=()
    # slurmstepd outlives slurmd for a few seconds: wait for ours, then end them by pid.
    for i in $(seq 50); do
        local left=()
        for stepd in $(pgrep -x slurmstepd || true); do
            case "$_slurm_stepds" in *" $stepd "*) ;; *) left+=("$stepd") ;; esac
        done
        [ ${#left[@]} -eq 0 ] && return 0
        sleep 0.1
    done
    for stepd in "${left[@]}"; do kill -KILL "$stepd" 2> /dev/null || true; done
}
