#!/usr/bin/env bash
# The compatibility matrix's kcat scenario (see test/compat/clients.ts for the
# steps). kcat has no admin API: the runner creates PREFIX-records (two
# partitions) and PREFIX-tx (one) before starting this. Debian's kcat is built
# on librdkafka 2.0, which has no KIP-848 and no share consumer.
# Usage: kcat-scenario.sh BOOTSTRAP PREFIX
set -uo pipefail
[ $# -eq 2 ] || { echo 'usage: kcat-scenario.sh BOOTSTRAP PREFIX' >&2; exit 2; }
B=$1 PREFIX=$2 TOPIC=$2-records GROUP=$2-group PER_CODEC=10 PARTITIONS=2
WORK=$(mktemp -d /tmp/compat-kcat-XXXX)
trap 'kill $(jobs -p) 2>/dev/null; [ -n "${COMPAT_KEEP:-}" ] || rm -rf "$WORK"' EXIT

emit() { printf '{"step":"%s","status":"%s","detail":"%s"}\n' "$1" "$2" "$(printf '%s' "$3" | tr '\n"\\' "  '" | cut -c1-300)"; }
# wait_for SECONDS WHAT COMMAND...: runs COMMAND every 0.2 s until it succeeds; fails naming WHAT.
wait_for() {
  local seconds=$1 what=$2 deadline=$((SECONDS + $1))
  shift 2
  until "$@"; do
    [ $SECONDS -lt $deadline ] || { echo "waited $seconds s for $what" >"$WORK/why"; return 1; }
    sleep 0.2
  done
}
# latest TOPIC PARTITIONS: the sum of the partitions' end offsets (-1: latest, -2: earliest with AT=-2).
sum_offsets() {
  local args=() p
  for ((p = 0; p < $2; p++)); do args+=(-t "$1:$p:$3"); done
  kcat -Q -b "$B" "${args[@]}" 2>/dev/null | awk '/offset/ { sum += $NF } END { print sum + 0 }'
}

emit create-topic unsupported 'kcat has no admin API (the runner created the topics)'
produced=0
for codec in none gzip snappy lz4 zstd; do
  if out=$(seq 0 $((PER_CODEC - 1)) | sed "s/.*/k&:$codec-&/" | kcat -P -b "$B" -t "$TOPIC" -K: -X enable.idempotence=true -X compression.codec=$codec 2>&1); then
    produced=$((produced + PER_CODEC))
    emit "produce-$codec" pass "$PER_CODEC keyed records, idempotent"
  else
    emit "produce-$codec" fail "kcat -P: $out"
  fi
done

# Two balanced consumers (-G); their stderr says what they were assigned.
member() { kcat -u -G "$GROUP" -b "$B" -X auto.offset.reset=earliest -f '%p:%o\n' -X auto.commit.interval.ms=200 -X session.timeout.ms=10000 "$TOPIC" >"$WORK/$1.out" 2>"$WORK/$1.err" & echo $!; }
# holds NAME N: the member's last assignment names N partitions of the topic.
holds() { [ "$(grep 'assigned:' "$WORK/$1.err" | tail -n 1 | grep -o "$TOPIC \[[0-9]*\]" | wc -l)" -eq "$2" ]; }
read_all() { [ "$(cat "$WORK"/a.out "$WORK"/b.out 2>/dev/null | sort -u | wc -l)" -eq "$produced" ]; }
a=$(member a)
b=$(member b)
if wait_for 60 "both members holding one partition and all $produced records" bash -c "$(declare -f holds read_all); WORK=$WORK TOPIC=$TOPIC produced=$produced; holds a 1 && holds b 1 && read_all"; then
  emit group-of-two pass "$produced records between two members, committed (auto-commit)"
else
  emit group-of-two fail "$(cat "$WORK/why"); a: $(tail -n 2 "$WORK/a.err"); b: $(tail -n 2 "$WORK/b.err")"
fi
kill -TERM "$b"
if wait_for 60 "the remaining member to hold both partitions" bash -c "$(declare -f holds); WORK=$WORK TOPIC=$TOPIC; holds a $PARTITIONS"; then
  emit member-leaves pass 'the remaining member took both partitions'
else
  emit member-leaves fail "$(cat "$WORK/why"); a: $(tail -n 2 "$WORK/a.err")"
fi
kill -TERM "$a"
wait "$a" "$b" 2>/dev/null
emit describe-group unsupported 'kcat has no group admin (DescribeGroups, OffsetFetch)'

low=$(sum_offsets "$TOPIC" $PARTITIONS -2)
high=$(sum_offsets "$TOPIC" $PARTITIONS -1)
if [ "$low" -eq 0 ] && [ "$high" -eq "$produced" ]; then emit list-offsets pass "earliest 0, latest $high"
else emit list-offsets fail "earliest $low, latest $high; expected 0 and $produced"; fi

# Transactions: kcat commits when its input ends. The aborted one is a producer
# killed inside its transaction; the next producer of the same id fences it.
TX=$PREFIX-tx
tx() { kcat -P -b "$B" -t "$TX" -X transactional.id="$PREFIX-tx" 2>>"$WORK/tx.err"; }
printf 'c0\nc1\nc2\n' | tx
mkfifo "$WORK/fifo"
kcat -P -b "$B" -t "$TX" -X transactional.id="$PREFIX-tx" <"$WORK/fifo" 2>>"$WORK/tx.err" &
killed=$! # kcat itself: killed, it cannot end its transaction
exec 7>"$WORK/fifo"
printf 'a0\na1\n' >&7
wait_for 30 'the open transaction to reach the log' bash -c "[ \$(kcat -Q -b $B -t $TX:0:-1 2>/dev/null | awk '/offset/ {print \$NF}') -ge 5 ]"
kill -KILL "$killed"
exec 7>&-
wait "$killed" 2>/dev/null
printf 'end\n' | timeout 60 kcat -P -b "$B" -t "$TX" -X transactional.id="$PREFIX-tx" 2>>"$WORK/tx.err" || echo "the successor producer failed or hung: exit $?" >>"$WORK/tx.err"
read=$(timeout 60 kcat -C -b "$B" -t "$TX" -o beginning -e -X isolation.level=read_committed -f '%s,' 2>/dev/null)
if [ "$read" = 'c0,c1,c2,end,' ]; then emit transactions pass 'committed read back, a killed transaction aborted by its successor (read_committed)'
else emit transactions fail "read_committed read '$read'; $(tail -n 2 "$WORK/tx.err")"; fi

emit kip848 unsupported "Debian's kcat is built on librdkafka 2.0.2, before group.protocol=consumer"
emit share-group unsupported 'kcat has no share consumer'
