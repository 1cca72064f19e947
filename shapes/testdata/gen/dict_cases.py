"""Writes ../dict_cases.json: dict[str, int] fields validated by Pydantic 2
the way FastAPI does (json.loads, then Python mode), for TestDictMatchesPydantic."""
import json
import os
from typing import Optional

from pydantic import BaseModel, Field, ValidationError, conint


class M(BaseModel):
    counts: Optional[dict[str, conint(ge=0)]] = Field(default=None, max_length=2)


CASES = ['{}', '{"counts":{"a":1,"b":2}}', '{"counts":[1]}', '{"counts":"x"}', '{"counts":{"a":"x","b":-1}}',
         '{"counts":{"a":1,"b":2,"c":3}}', '{"counts":{"a":1,"a":"7"}}', '{"counts":null}',
         '{"counts":{"a":true,"b":"12"}}', '{"counts":{"a":1.5}}']

out = []
for c in CASES:
    try:
        m = M.model_validate(json.loads(c))
        out.append({"in": c, "ok": True, "value": m.counts})
    except ValidationError as e:
        out.append({"in": c, "ok": False, "errors": json.loads(e.json(include_url=False))})
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dict_cases.json"), "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
