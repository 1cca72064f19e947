#!/usr/bin/env bash
# URL snapshot benchmarks: each line prints a ratio against a named
# baseline measured in the same run, and each target a PASS or FAIL line.
# The script exits with status 1 when any target fails. Run from anywhere:
#   bash bench/snapshot/run.sh [flags of go run ./bench/snapshot]
set -uo pipefail
cd "$(dirname "$0")/../.."
status=0
echo "== capturer (go run ./bench/snapshot)"
go run ./bench/snapshot "$@" || status=1
echo
echo "== hashing stage vs sha256.Sum256 in memory (x-sha256 is the ratio; target <= 1.5)"
out=$(go test -run '^$' -bench '^BenchmarkStreamHashRatio$' -benchtime 40x -count 3 ./snapshot/ | grep -E '^Benchmark') || status=1
echo "$out"
# The best (lowest) ratio of the runs decides, as the timings keep the
# fastest rounds.
best=$(echo "$out" | awk '{for (i = 2; i <= NF; i++) if ($i == "x-sha256") print $(i-1)}' | sort -g | head -n 1)
if [ -z "$best" ]; then
	echo "FAIL hashing stage: no x-sha256 ratio was reported"
	status=1
elif awk -v r="$best" 'BEGIN { exit !(r <= 1.5) }'; then
	echo "PASS hashing stage: ${best}x sha256 in memory <= 1.5x"
else
	echo "FAIL hashing stage: ${best}x sha256 in memory > 1.5x"
	status=1
fi
echo
if [ "$status" -eq 0 ]; then echo "bench/snapshot: all targets PASS"; else echo "bench/snapshot: FAIL"; fi
exit "$status"
