#!/usr/bin/env python3
"""Times pydantic-core's model_validate_json on the payloads of
shapes/testdata/bench with the models of shapes/testdata/gen/models.py.
Prints one line per shape: "<name> <best ns/op>"."""
import os
import sys
import timeit

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "shapes", "testdata", "gen"))
import models  # noqa: E402

NUMBER = int(os.environ.get("PY_NUMBER", "20000"))
REPEAT = int(os.environ.get("PY_REPEAT", "5"))

for name in ["ClaimVerificationRequest", "NicheDraft", "ExploreRequest"]:
    with open(os.path.join(ROOT, "shapes", "testdata", "bench", name + ".json"), "rb") as f:
        payload = f.read()
    model = models.SHAPES[name]
    model.model_validate_json(payload)
    best = min(timeit.repeat(lambda: model.model_validate_json(payload), number=NUMBER, repeat=REPEAT))
    print(f"{name} {best / NUMBER * 1e9:.0f}")
