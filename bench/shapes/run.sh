#!/usr/bin/env bash
# Compares shapes.Decode with pydantic-core's model_validate_json on the
# same payloads (shapes/testdata/bench/*.json), in the same run, and prints
# the ratio Go time / Pydantic time per shape (goal: below 1.0).
# Both sides run ROUNDS times (default 10), interleaved in short runs; the
# best time of each counts, which filters out the noise of a shared machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${ROUNDS:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for _ in $(seq "$rounds"); do
  go test ./shapes -run '^$' -bench '^BenchmarkDecode$' -benchtime "${BENCHTIME:-10000x}" -benchmem >>"$tmp/go.txt"
  PY_NUMBER="${PY_NUMBER:-10000}" PY_REPEAT="${PY_REPEAT:-2}" python3 bench/shapes/pydantic_bench.py >>"$tmp/py.txt"
done
python3 - "$tmp/go.txt" "$tmp/py.txt" <<'PY'
import re, sys
go, py, allocs = {}, {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"BenchmarkDecode/(\w+)-\d+\s+\d+\s+([\d.]+) ns/op.*?(\d+) B/op\s+(\d+) allocs/op", line)
    if m:
        name, ns = m.group(1), float(m.group(2))
        go[name] = min(go.get(name, ns), ns)
        allocs[name] = (m.group(3), m.group(4))
for line in open(sys.argv[2]):
    name, ns = line.split()
    py[name] = min(py.get(name, float(ns)), float(ns))
print(f"{'shape':<26}{'Go ns/op':>10}{'B/op':>7}{'allocs':>8}{'pydantic ns/op':>16}{'ratio':>8}")
worst = 0
for name in ["ClaimVerificationRequest", "NicheDraft", "ExploreRequest"]:
    r = go[name] / py[name]
    worst = max(worst, r)
    print(f"{name:<26}{go[name]:>10.0f}{allocs[name][0]:>7}{allocs[name][1]:>8}{py[name]:>16.0f}{r:>8.2f}")
print(f"worst ratio {worst:.2f} ({'below' if worst < 1 else 'NOT below'} 1.0)")
PY
