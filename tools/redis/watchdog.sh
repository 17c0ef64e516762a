#!/usr/bin/env bash
# Started by redis-process.ts beside the redis-server processes of one topology: once the process
# that started them is gone (a crashed or killed test run), kills every node whose pid file is in
# the topology's folder and, with "remove", removes the folder. SIGKILL also ends a paused node.
# Usage: watchdog.sh <owner pid> <folder> remove|keep
owner="$1" dir="$2" mode="$3"
trap 'exit 0' TERM
while kill -0 "$owner" 2>/dev/null; do sleep 1; done
for pidfile in "$dir"/*/pid; do
  [ -f "$pidfile" ] && kill -9 "$(cat "$pidfile")" 2>/dev/null
done
[ "$mode" = remove ] && rm -rf "$dir"
exit 0
