#!/usr/bin/env bash
# URL snapshot benchmarks: each line prints a ratio against a named
# baseline measured in the same run. Run from anywhere:
#   bash bench/snapshot/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
echo "== capturer (go run ./bench/snapshot)"
go run ./bench/snapshot "$@"
echo
echo "== hashing stage vs sha256.Sum256 in memory (x-sha256 is the ratio; target <= 1.5)"
go test -run '^$' -bench '^BenchmarkStreamHashRatio$' -benchtime 40x -count 3 ./snapshot/ | grep -E '^Benchmark'
