#!/bin/sh
# clickhouse-cluster.sh - a throwaway ClickHouse cluster for tests: ZooKeeper
# (Debian's zookeeper package, run by hand) and four clickhouse-server
# processes on free loopback ports, 2 shards x 2 replicas, cluster name
# "jprof_test", everything under DIR.
#
#   clickhouse-cluster.sh start DIR      starts ZooKeeper, then n1..n4 (shard 1:
#                                        n1, n2; shard 2: n3, n4), waits until
#                                        all answer (bounded), prints their HTTP
#                                        URLs comma-separated (also DIR/urls)
#   clickhouse-cluster.sh stop DIR       stops the nodes, then ZooKeeper
#   clickhouse-cluster.sh kill DIR NODE  kill -9 of one node (n1..n4) or zk
#   clickhouse-cluster.sh restart DIR NODE  the same ports and data again (a
#                                        ClickHouse node with force_restore_data,
#                                        as after a crash)
#
# Exit codes: 0 ok, 77 clickhouse-server, zookeeper or java is not installed
# (and CI is not set), 1 something did not come up (logs on stderr).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
chctl=$here/clickhouse-server.sh
zkcp=/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-simple.jar

die() { echo "clickhouse-cluster.sh: $*" >&2; exit 1; }

missing() {
    if [ "${CI:-}" = true ]; then
        die "$1 is not installed (CI=true: this is a failure; apt-get install $2)"
    fi
    echo "clickhouse-cluster.sh: $1 is not installed (apt-get install $2)" >&2
    exit 77
}

free_port() {
    python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# ZooKeeper answers "srvr" with its mode once it takes sessions ("ruok"
# answers earlier, and ClickHouse's first connections then fail)
zk_ready() {
    python3 -c 'import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)
    s.sendall(b"srvr")
    sys.exit(0 if b"Mode:" in s.recv(4096) else 1)
except OSError:
    sys.exit(1)' "$1"
}

zk_start() {
    dir=$1
    port=$(cat "$dir/zk/port")
    setsid java -Xmx128m -cp "$zkcp" org.apache.zookeeper.server.ZooKeeperServerMain \
        "$dir/zk/zoo.cfg" >>"$dir/zk/log" 2>&1 </dev/null &
    echo $! >"$dir/zk/pid"
    i=0
    while [ $i -lt 600 ]; do # 60 s: a JVM on a busy machine
        zk_ready "$port" && return 0
        kill -0 "$(cat "$dir/zk/pid")" 2>/dev/null || break
        sleep 0.1
        i=$((i + 1))
    done
    tail -n 20 "$dir/zk/log" >&2
    die "ZooKeeper did not come up on port $port"
}

# the XML each node adds to its config: the cluster, ZooKeeper, its macros
node_xml() {
    shard=$1 replica=$2 zkport=$3
    set -- $(cat "$dir/tcp_ports")
    cat <<XML
    <remote_servers>
        <jprof_test>
            <shard>
                <internal_replication>true</internal_replication>
                <replica><host>127.0.0.1</host><port>$1</port></replica>
                <replica><host>127.0.0.1</host><port>$2</port></replica>
            </shard>
            <shard>
                <internal_replication>true</internal_replication>
                <replica><host>127.0.0.1</host><port>$3</port></replica>
                <replica><host>127.0.0.1</host><port>$4</port></replica>
            </shard>
        </jprof_test>
    </remote_servers>
    <zookeeper>
        <node><host>127.0.0.1</host><port>$zkport</port></node>
        <session_timeout_ms>15000</session_timeout_ms>
    </zookeeper>
    <macros><shard>$shard</shard><replica>$replica</replica></macros>
    <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>
    <interserver_http_host>127.0.0.1</interserver_http_host>
XML
}

start() {
    dir=$1
    command -v clickhouse-server >/dev/null 2>&1 || [ -x /usr/sbin/clickhouse-server ] ||
        missing clickhouse-server clickhouse-server
    [ -f /usr/share/java/zookeeper.jar ] || missing ZooKeeper zookeeper
    command -v java >/dev/null 2>&1 || missing java openjdk-17-jdk-headless
    mkdir -p "$dir/zk/data"
    zkport=$(free_port)
    echo "$zkport" >"$dir/zk/port"
    cat >"$dir/zk/zoo.cfg" <<CFG
tickTime=2000
dataDir=$dir/zk/data
clientPort=$zkport
clientPortAddress=127.0.0.1
admin.enableServer=false
maxClientCnxns=0
4lw.commands.whitelist=srvr,ruok
CFG
    tcp=""
    for n in 1 2 3 4; do
        echo "$(free_port) $(free_port) $(free_port)" >"$dir/n$n.ports"
        tcp="$tcp $(cut -d' ' -f2 "$dir/n$n.ports")"
    done
    echo "$tcp" >"$dir/tcp_ports"
    zk_start "$dir"
    # the four at once (each waits for its own answer; not a bare wait:
    # ZooKeeper is a child of this shell too)
    starters=""
    for n in 1 2 3 4; do
        node_xml $(((n + 1) / 2)) "n$n" "$zkport" >"$dir/n$n.xml"
        (CLICKHOUSE_PORTS=$(cat "$dir/n$n.ports") CLICKHOUSE_EXTRA_CONFIG=$dir/n$n.xml \
            "$chctl" start "$dir/n$n" >"$dir/n$n.url" 2>"$dir/n$n.err"
        echo $? >"$dir/n$n.rc") &
        starters="$starters $!"
    done
    for p in $starters; do wait "$p"; done
    urls=""
    for n in 1 2 3 4; do
        if [ "$(cat "$dir/n$n.rc")" != 0 ]; then
            cat "$dir/n$n.err" >&2
            die "node n$n did not come up"
        fi
        urls="$urls${urls:+,}$(cat "$dir/n$n.url")"
    done
    echo "$urls" >"$dir/urls"
    echo "$urls"
}

stop() {
    dir=$1
    stoppers=""
    for n in 1 2 3 4; do
        if [ -f "$dir/n$n/pid" ]; then
            "$chctl" stop "$dir/n$n" &
            stoppers="$stoppers $!"
        fi
    done
    for p in $stoppers; do wait "$p"; done
    "$chctl" stop "$dir/zk" # TERM, then KILL, by the pid in zk/
}

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: $0 start|stop|kill|restart DIR [NODE]"
case $cmd in
start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    start "$dir"
    ;;
stop)
    stop "$dir"
    ;;
kill)
    node=${3:-}
    case $node in
    zk) f=$dir/zk/pid ;;
    n[1-4]) f=$dir/$node/pid ;;
    *) die "kill: node n1..n4 or zk" ;;
    esac
    [ -f "$f" ] || die "$node is not running"
    kill -KILL "$(cat "$f")" 2>/dev/null || true
    rm -f "$f"
    ;;
restart)
    node=${3:-}
    dir=$(cd "$dir" && pwd)
    case $node in
    zk) zk_start "$dir" ;;
    n[1-4])
        # After a kill -9 a replica may hold a part it wrote that ZooKeeper
        # never listed (an INSERT cut before its commit). 18.16 then refuses
        # to attach a table where such parts are over half the rows (a table
        # of a few rows: one part is enough) until told to take them aside:
        # the operator's step after a crash, docs/SCALE.md.
        mkdir -p "$dir/$node/data/flags"
        : >"$dir/$node/data/flags/force_restore_data"
        "$chctl" restart "$dir/$node" >/dev/null
        ;;
    *) die "restart: node n1..n4 or zk" ;;
    esac
    ;;
*) die "unknown command $cmd" ;;
esac
