#!/usr/bin/env bash
# Started by kafka-cluster.ts beside the Java nodes: once the process that started them is gone
# (a crashed or killed test run), kills every node whose pid file is in the cluster folder and,
# with "remove", removes the folder. Usage: watchdog.sh <owner pid> <cluster folder> remove|keep
owner="$1" dir="$2" mode="$3"
trap 'exit 0' TERM
while kill -0 "$owner" 2>/dev/null; do sleep 2; done
for pidfile in "$dir"/node-*/pid; do
  [ -f "$pidfile" ] && kill -9 "$(cat "$pidfile")" 2>/dev/null
done
[ "$mode" = remove ] && rm -rf "$dir"
exit 0
