#!/usr/bin/env python3
"""Generates the golden cases of shapes.Decode and shapes.DecodeQuery with
Pydantic 2 (pydantic 2.13.4 / pydantic-core 2.46.4) and Python's json module,
emulating how FastAPI validates a JSON body (json.loads, then
validate_python with from_attributes=True) and query parameters.

Run from the repository root:  python3 shapes/testdata/gen/gen.py
Writes shapes/testdata/golden_body.jsonl.gz and golden_query.jsonl.gz.
Each line: {"shape", "input" (the raw text, or "query": [[k, v], ...], or
"rawQuery": the query string as Starlette receives it, bytes as Latin-1
characters), "errors" (FastAPI's detail list with loc relative to
body/query, or null), "value" (model_dump(mode="json", by_alias=True) on
success, else null)}, and "deviation": "int64" on the cases Pydantic
accepts with an integer beyond int64 in an int field (shapes answers
int_parsing_size; see shapes/doc.go).

Lone surrogates (which Python keeps in a str and cannot encode as UTF-8)
are written as their \\uXXXX escapes, in inputs and answers alike.
"""
import contextlib
import copy
import datetime
import gzip
import io
import json
import os
import random
import re
import sys
from urllib.parse import parse_qsl

from pydantic import TypeAdapter, ValidationError

sys.path.insert(0, os.path.dirname(__file__))
import models  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)
INT64 = (-(2 ** 63), 2 ** 63 - 1)


class Skip(Exception):
    """A case outside the documented agreement (NaN/Infinity literals,
    integers beyond int64 accepted by Python)."""


class BigInt(Skip):
    """Pydantic accepted an integer beyond int64."""


SURROGATE = re.compile("[\ud800-\udfff]")


def esc_surrogates(text):
    """Writes each lone surrogate of text as its JSON escape."""
    return SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), text)


def _no_constants(name):
    raise Skip(name)


def _encode_errors(errs):
    out = []
    for e in errs:
        d = {"type": e["type"], "loc": list(e["loc"]), "msg": e["msg"], "input": e["input"]}
        if "ctx" in e:
            d["ctx"] = {k: ({} if isinstance(v, Exception) else v) for k, v in e["ctx"].items()}
        out.append(d)
    return out


def _check_ints(v):
    if isinstance(v, str):
        return
    if isinstance(v, bool):
        return
    if isinstance(v, int) and not (INT64[0] <= v <= INT64[1]):
        raise BigInt("big int")
    if isinstance(v, dict):
        for k, x in v.items():
            _check_ints(k)
            _check_ints(x)
    if isinstance(v, list):
        for x in v:
            _check_ints(x)


def expected_body(model, text):
    try:
        obj = json.loads(text.encode("utf-8"), parse_constant=_no_constants)  # FastAPI parses bytes
    except json.JSONDecodeError as e:
        return [{"type": "json_invalid", "loc": [e.pos], "msg": "JSON decode error", "input": {},
                 "ctx": {"error": e.msg}}], None
    if obj is None:
        return [{"type": "missing", "loc": [], "msg": "Field required", "input": None}], None
    try:
        m = TypeAdapter(model).validate_python(obj, from_attributes=True)
    except ValidationError as e:
        return _encode_errors(e.errors(include_url=False)), None
    _check_ints(obj)  # the accepted input, before Pydantic's lossy serialisation
    # mode="python", then dates as text: mode="json" would write a lone
    # surrogate as three U+FFFD.
    value = jsonable(m.model_dump(mode="python", by_alias=True))
    _check_ints(value)
    return None, value


def jsonable(v):
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


def dumps(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# ---------------------------------------------------------------- bases

def bench(name):
    with open(os.path.join(OUT, "bench", name + ".json")) as f:
        return json.load(f)


TAG = {"key": "building", "value": "church", "required": False}
NUM = {"key": "height", "minimum": 10.5, "maximum": None}
OSM = {"label": "Church towers", "kind": "tagged", "filters": [TAG, {"key": "amenity"}], "numericFilters": [NUM],
       "proximityMeters": 200, "selectionHints": ["more-storeys"]}
REQ = {"expression": "lake AND (tower OR bridge)", "strength": "required", "route": "geography",
       "evidence": "combined", "stepIds": ["lakes"]}
STEP = {"id": "lakes", "tool": "search_geography", "inputs": ["a"], "queries": ["lake"], "geographicKinds": ["lake"],
        "osmFeatures": [OSM], "combination": "any", "exclude": False, "discoveryHints": True, "weights": [1, 2],
        "visualIntent": "calm water", "radiusMeters": 900}
PROGRAM = {"steps": [STEP, {"id": "out", "tool": "rank_results", "inputs": ["lakes"]}], "output": "out"}
BRANCH = {"poiQueries": ["bridge"], "geographicKinds": ["river"], "geographicCombination": "any",
          "osmFeatures": [OSM], "featureCombination": "all", "visualIntent": "old stone bridge"}
ENDPOINT = {"query": "Geneva station", "lat": 46.21, "lon": 6.14, "label": "Start"}
ROUTE = {"origin": ENDPOINT, "destination": {"lat": 46.2, "lon": 6.15}, "travelMode": "drive",
         "corridorMeters": 300}
EXPLORE_FULL = {"lat": 46.2, "lon": 6.1, "route": ROUTE, "searchProgram": PROGRAM, "searchBranches": [BRANCH],
                "query": "sunset", "radius": 2000, "limit": 4, "photoStyles": ["nature"], "categories": ["park"],
                "poiQueries": ["jet d'eau"], "geographicCombination": "any", "featureCombination": "any",
                "osmFeatures": [OSM], "geographicKinds": ["lake"], "requirements": [REQ],
                "subjectRole": "portrait-background", "scoringIntent": "golden hour", "selectedPoiIds": ["p1"],
                "poiCatalogToken": "tok", "preferences": "quiet"}
ERRDETAIL = {"type": "missing", "loc": ["body", "claim", 0], "msg": "Field required", "input": {"a": 1},
             "ctx": {"x": 1}}

BASES = {
    "ClaimVerificationRequest": [bench("ClaimVerificationRequest"), {"claim": "Water boils at 100 C."}],
    "NicheDraft": [bench("NicheDraft")],
    "TagFilter": [TAG, {"key": "a"}],
    "NumericFilter": [NUM, {"key": "h"}],
    "OSMFeatureQuery": [OSM, {"label": "x"}],
    "Requirement": [REQ, {"expression": "x", "strength": "preferred", "route": "visual", "stepIds": []}],
    "SearchStep": [STEP, {"id": "a", "tool": "union"}],
    "SearchProgram": [PROGRAM],
    "SearchBranch": [BRANCH, {}],
    "RouteEndpoint": [ENDPOINT, {}],
    "RouteRequest": [ROUTE, {"destination": {}}],
    "ExploreRequest": [bench("ExploreRequest"), EXPLORE_FULL, {"lat": 0, "lon": 0}],
    "SearchTaskRequest": [EXPLORE_FULL, {"lat": 1.5, "lon": -2}],
    "IntentRequest": [{"lat": 1, "lon": 2, "route": ROUTE, "subjectRole": "existing-subject", "query": "q",
                       "radius": 300, "limit": 2, "photoStyles": ["urban"], "preferences": "p",
                       "categories": ["bar"], "poiQueries": ["a"], "geographicKinds": ["sea"], "osmFeatures": [OSM],
                       "geographicCombination": "any", "featureCombination": "any", "scoringIntent": "s"}],
    "SearchParameters": [{"lat": 1, "lon": 2, "radius": 300, "searchProgram": PROGRAM, "searchBranches": [BRANCH],
                          "poiQueries": ["a"], "geographicKinds": ["peak"], "osmFeatures": [OSM],
                          "photoStyles": ["anything"], "categories": ["free"], "requirements": [REQ],
                          "subjectRole": "scene", "scoringIntent": "s", "preferences": "p"}, {"lat": 0, "lon": 0}],
    "PoiViewRequest": [{"searchId": "s1", "poiId": "p1", "heading": 359.5, "pitch": -10, "fov": 60, "scope": "selfie",
                        "framing": "90"}],
    "HiddenPoiRequest": [{"searchId": "s", "poiId": "p", "hidden": False}],
    "HistoryItem": [{"id": "h:1_a-b", "created": 1700000000, "label": "Geneva", "radius": 1000, "checked": False,
                     "result": {"items": [1, 2.5, "x", None, {"k": True}]}}],
    "PublishRequest": [{"kind": "photo", "id": "x", "poiId": "p"}],
    "RemovedItemRequest": [{"kind": "portrait", "id": "x", "removed": False}],
    "ReactionRequest": [{"kind": "like", "active": True, "poiId": "p"}],
    "CommentRequest": [{"text": "Nice", "poiId": "p"}],
    "WithdrawRequest": [{"id": "x"}],
    "ThumbnailRequest": [{"sourceUrls": ["https://a.example/1.jpg"]}],
    "TransferRequest": [{"state": "s" * 40, "ticket": "t"}],
    "LicenseRequest": [{"licenseNumber": "AB12"}],
    "AvatarUpload": [{"name": "me", "image": "data:image/png;base64,AAAA"}],
    "ContactMessageRequest": [{"name": "Ann", "email": "a@b.c", "message": "Hello, I have a question.",
                               "subject": "Billing", "serviceId": "svc", "company": "ACME"}],
    "CustomerCreateRequest": [{"name": "ACME", "email": "ops@acme.example"}, {"name": "x"}],
    "StatusIncidentCreateRequest": [{"title": "Outage", "message": "API down", "severity": "major",
                                     "affectedComponents": ["api"]}],
    "StatusIncidentUpdateRequest": [{"status": "resolved", "message": "Fixed"}],
    "StatusSubscriptionRequest": [{"channel": "email", "target": "a@b.c", "verificationEmail": "a@b.c"}],
    "SupportMessageRequest": [{"message": "hi"}],
    "SupportTicketCreateRequest": [{"subject": "Help", "message": "Something broke", "serviceId": "s",
                                    "orderId": "o", "priority": "high"}],
    "SupportTicketUpdateRequest": [{"status": "closed", "message": "done"}],
    "QuoteRequest": [{"tier": "deep"}, {}],
    "CapabilitiesResponse": [{"service": "assay", "version": "0.1.0", "capabilities": [
        {"id": "a", "summary": "s", "status": "ok", "method": "GET", "path": "/x"}]}],
    "Capability": [{"id": "a", "summary": "s", "status": "ok", "method": "GET", "path": "/x"}],
    "HTTPValidationError": [{"detail": [ERRDETAIL]}, {}],
    "ValidationError": [ERRDETAIL, {"type": "t", "loc": [], "msg": "m"}],
}
SIGNAL = {"kind": "question", "sourceUrl": "https://forum.example.com/q/1", "origin": "forum",
          "title": "How do I chase invoices?", "observedAt": "2026-01-02T03:04:05Z", "license": "CC BY-SA 4.0",
          "engagement": {"upvotes": 3, "answers": 1}, "externalId": "q-1", "state": "pending"}
BASES.update({
    "NicheCreateRequest": [{"operationId": "op-1", "actor": "ana", "reason": "first pass", "draft": bench("NicheDraft")},
                           {"draft": bench("NicheDraft")}],
    "NicheReviseRequest": [{"expectedRevision": 2, "reason": "new evidence", "draft": bench("NicheDraft")}],
    "NicheTransitionRequest": [{"expectedRevision": 1, "operationId": "pub-1"}, {"expectedRevision": 3}],
    "NicheSignalInput": [SIGNAL, {k: SIGNAL[k] for k in ("kind", "sourceUrl", "origin", "title", "observedAt", "license")}],
    "NicheSignalBatch": [{"signals": [SIGNAL, SIGNAL]}],
    "NicheModerationRequest": [{"state": "accepted", "note": "checked", "actor": "ana"}, {"state": "rejected"}],
    "ReceiptVerifyRequest": [{"receipt": {"receiptId": "rcpt_1", "amountMicrousd": 50000}}],
    "SubscriptionClaimRequest": [{"sessionId": "cs_test_1"}],
})

# ------------------------------------------------------------ schema walk


class Schema:
    def __init__(self, model):
        s = model.model_json_schema()
        self.defs = s.get("$defs", {})
        self.root = s

    def resolve(self, s):
        while "$ref" in s:
            s = self.defs[s["$ref"].split("/")[-1]]
        return s

    def nonnull(self, s):
        s = self.resolve(s)
        if "anyOf" in s:
            alts = [self.resolve(a) for a in s["anyOf"] if a.get("type") != "null"]
            if len(alts) == 1:
                merged = dict(alts[0])
                for k, v in s.items():
                    if k != "anyOf":
                        merged.setdefault(k, v)
                return merged, True
        return s, False


POOL = [None, True, False, 0, 1, -1, 2, 1.5, 0.5, 1.0, -0.0, 2.0, "", " ", "x", "abc", "42", " 7 ", "+3", "1_000",
        "1e3", "4.0", "4.5", "yes", "Off", "nan", "inf", "2026-01-01", [], ["x"], [1, 2], {}, {"a": 1}, "１２",
        "é", 1e20, 1e3, "0x10", "true", 7, 100, "\u2003 12\n"]
BIG = [10 ** 20, -(10 ** 20)]
DATES = ["2026-01-01", "2026-01-01T00:00:00", "2026-01-01T00:00:00Z", "2026-01-01T10:00:00", "yesterday", 0, 1,
         86400, 86400.0, 86400.5, "2026-13-01", "2026-02-30", "2024-02-29", "2023-02-29", "20260101", "2026-1-1",
         "2026-01-01 00:00:00", "2026-01-01T00:00:00+01:00", "2026-01-01T00:00", "2026-01-01x", "", "1", "86400",
         1e11, 86400000, "2026-01-01T00:00:00.000", "2026-01-01T00:00:00.000001", "2026-01-01T24:00:00",
         "2026-01-01T00:60", "2026-01-01T00:00:60", "2026-01-01T00:00:00.", "2026-01-01T00:00:00+25:00",
         "2026-01-01T00:00:00+01:60", "2026-01-01T00:00:00+0100", "2026-01-01T00:00:00X", "2026-01-01T0",
         "2026/01/01", "2026-01-01t00:00:00z", "2026-01-01_00:00", "2026-01-01T00:00:00-00:00", "+86400",
         "-86400", "86400.0", "86400.5", "1e5", "99999999999999", "-99999999999999999", 1e15, -1,
         "2026-01-01T00:00:00+01", "2026-01-01T00:00:00\u221201:00", "20x6-01-01", "2026-x1-01", "2026-01-x1",
         "2026-01-01T0x:00", "2026-01-01T00-00", "2026-01-01T00:0x", "2026-01-01T00:00:0x", 10 ** 20, 253402300800,
         "253402300799", -62167219201, "2026-01-01T00:00:00.0000000001", 9.5e18, -9.5e18, 1e300, -1e300]


def boundary_values(schema, s):
    s, nullable = schema.nonnull(s)
    vals = []
    t = s.get("type")
    if "enum" in s or "const" in s:
        en = s.get("enum", [s.get("const")])
        vals += en[:3] + [en[0].upper(), en[0] + " ", "nope"]
    if t == "string":
        mn, mx = s.get("minLength"), s.get("maxLength")
        for n in [mn, mx]:
            if n is None:
                continue
            for k in (n - 1, n, n + 1):
                if 0 <= k <= 50000:
                    vals += ["a" * k]
            if 1 <= n <= 50000:
                vals += ["é" * n, "😀" * (n + 1), "😀" * n]
        if "pattern" in s:
            vals += ["bad key!", "9abc", "a" * 41, "a" * 40, "A_b:c.d-e", "", "ab\n", "aé"]
        if s.get("format") == "date":
            vals += DATES
    if t in ("integer", "number"):
        lo = s.get("minimum", s.get("exclusiveMinimum"))
        hi = s.get("maximum", s.get("exclusiveMaximum"))
        for b in [lo, hi]:
            if b is None:
                continue
            vals += [b - 1, b, b + 1, b - 0.5, b + 0.5, float(b), str(b), str(b + 1), f" {b} ", str(b - 1) + ".0",
                     b + 1e-9, b - 1e-9, True]
        if lo is not None and hi is not None:
            vals += BIG
    if t == "array":
        items = s.get("items", {})
        ex = example_item(schema, items)
        mn, mx = s.get("minItems"), s.get("maxItems")
        for n in [mn, mx]:
            if n is None:
                continue
            for k in (n - 1, n, n + 1):
                if 0 <= k <= 200:
                    vals.append([copy.deepcopy(ex) for _ in range(k)])
        if mx is not None and mx + 1 <= 200:
            vals.append([copy.deepcopy(ex) for _ in range(mx)] + [None])
            vals.append([None] + [copy.deepcopy(ex) for _ in range(mx)])
        if mn is not None and mn >= 2:
            vals.append([None] * (mn - 1))
        vals += [[ex, None, 5], [ex, ex], [{}], "x", {"0": ex}]
    if t == "object" or "properties" in s:
        vals += [{}, {"zzz": 1}, [s.get("title", "x")], "obj", 5]
    if nullable:
        vals.append(None)
    return vals


def example_item(schema, items):
    items, _ = schema.nonnull(items)
    if "enum" in items:
        return items["enum"][0]
    if "const" in items:
        return items["const"]
    t = items.get("type")
    if t == "string":
        return "a" * max(1, items.get("minLength", 1))
    if t == "integer":
        return 1
    if t == "number":
        return 1.0
    title = items.get("title")
    if title in BASES:
        return copy.deepcopy(BASES[title][0])
    if items.get("anyOf"):
        return "a"
    return {}


def int_unbounded(schema, s):
    s, _ = schema.nonnull(s)
    if s.get("type") == "integer":
        return not (("minimum" in s or "exclusiveMinimum" in s) and ("maximum" in s or "exclusiveMaximum" in s))
    if s.get("type") == "array":
        return int_unbounded(schema, s.get("items", {}))
    return False


def paths(schema, doc, s, prefix=()):
    """Yield (path, subschema, parent_object_schema_or_None) for every value in doc."""
    s_res, _ = schema.nonnull(s)
    if isinstance(doc, dict) and "properties" in s_res:
        for name, ps in s_res["properties"].items():
            yield prefix + (name,), ps, s_res
            if name in doc:
                yield from paths(schema, doc[name], ps, prefix + (name,))
    elif isinstance(doc, list) and s_res.get("type") == "array":
        for i, item in enumerate(doc):
            yield prefix + (i,), s_res.get("items", {}), None
            yield from paths(schema, item, s_res.get("items", {}), prefix + (i,))


def objects(schema, doc, s, prefix=()):
    s_res, _ = schema.nonnull(s)
    if isinstance(doc, dict) and "properties" in s_res:
        yield prefix, s_res
        for name, ps in s_res["properties"].items():
            if name in doc:
                yield from objects(schema, doc[name], ps, prefix + (name,))
    elif isinstance(doc, list) and s_res.get("type") == "array":
        for i, item in enumerate(doc):
            yield from objects(schema, item, s_res.get("items", {}), prefix + (i,))


def get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def put(doc, path, value):
    doc = copy.deepcopy(doc)
    get(doc, path[:-1])[path[-1]] = value
    return doc


def delete(doc, path):
    doc = copy.deepcopy(doc)
    del get(doc, path[:-1])[path[-1]]
    return doc


# ---------------------------------------------------------------- cases

def body_cases(rng):
    for name, model in models.SHAPES.items():
        schema = Schema(model)
        seen = set()

        def case(text):
            if text in seen:
                return
            seen.add(text)
            yield text

        for base in BASES[name]:
            yield from ((name, t) for t in case(dumps(base)))
            yield from ((name, t) for t in case(json.dumps(base, indent=2, ensure_ascii=True)))
            all_paths = list(paths(schema, base, schema.root))
            for path, s, parent in all_paths:
                vals = boundary_values(schema, s)
                pool = [v for v in POOL if not isinstance(v, int) or isinstance(v, bool) or not int_unbounded(schema, s)]
                vals += rng.sample(pool, min(len(pool), 14))
                if not int_unbounded(schema, s):
                    vals += rng.sample(BIG, 1)
                for v in vals:
                    if isinstance(path[-1], int) and not isinstance(get(base, path[:-1]), list):
                        continue
                    try:
                        doc = put(base, path, copy.deepcopy(v))
                    except (KeyError, IndexError, TypeError):
                        continue
                    yield from ((name, t) for t in case(dumps(doc)))
                if parent is not None:
                    try:
                        if path[-1] in get(base, path[:-1]):
                            yield from ((name, t) for t in case(dumps(delete(base, path))))
                    except (KeyError, TypeError):
                        pass
            for prefix, _ in objects(schema, base, schema.root):
                obj = get(base, prefix)
                for extra in ({"zzz": 1}, {"extra_key": [1, {"b": None}], "zz": "y"}, {"": 0}):
                    doc = copy.deepcopy(base)
                    get(doc, prefix).update(extra) if prefix else doc.update(extra)
                    yield from ((name, t) for t in case(dumps(doc)))
                yield from ((name, t) for t in case(dumps(put(base, prefix, {}) if prefix else {})))
            # several errors at once: a seeded random mutator
            mutable = [(p, s) for p, s, _ in all_paths]
            for _ in range(40 if len(mutable) > 10 else 15):
                doc = copy.deepcopy(base)
                for _ in range(rng.randint(2, 5)):
                    p, s = rng.choice(mutable)
                    vals = boundary_values(schema, s) + [v for v in POOL if not isinstance(v, int) or isinstance(v, bool) or not int_unbounded(schema, s)]
                    try:
                        if rng.random() < 0.15 and not isinstance(p[-1], int):
                            del get(doc, p[:-1])[p[-1]]
                        else:
                            get(doc, p[:-1])[p[-1]] = copy.deepcopy(rng.choice(vals))
                    except (KeyError, IndexError, TypeError):
                        pass
                if rng.random() < 0.3:
                    doc["zzz_extra"] = rng.choice(POOL) if isinstance(doc, dict) else None
                yield from ((name, t) for t in case(dumps(doc)))
            # text-level variants: duplicate keys, escaped keys, odd spacing
            text = dumps(base)
            first = next(iter(base), None)
            if first is not None:
                yield from ((name, t) for t in case(text[:-1] + ',"%s":5}' % first))
                yield from ((name, t) for t in case('{"%s":5,' % first + text[1:]))
                yield from ((name, t) for t in case(text.replace('"%s"' % first, '"\\u%04x%s"' % (ord(first[0]), first[1:]), 1)))
                yield from ((name, t) for t in case(text[:-1] + ',"zzz":1,"zzz":[2]}'))
            yield from ((name, t) for t in case(" \t\r\n" + text.replace(",", " ,\n\t") + "\n "))
        for t in ["[]", "[1,2]", '"x"', "5", "true", "null", " null ", "1.5", "{}", '{"a":1}', '{"a":{"b":[]}}']:
            yield from ((name, x) for x in case(t))


SYNTAX_BITS = ['"', "\\", ",", ":", "}", "]", "{", "[", "x", " ", "\x01", "1", "-", ".", "e", "n", "é", "\\u",
               "\\ud800", "\\ud83d\\ude00", "\\u12", "\\x", "t", "nul", "-0", "01", "1.", "1e", "1e+", ".5", "\x7f",
               "\t", "//", "'", "0x1", "\u2028", "😀", "[1,]", '{"a":1,}', "\n"]


def syntax_cases(rng):
    names = ["ClaimVerificationRequest", "NicheDraft", "ExploreRequest", "TagFilter", "HistoryItem"]
    for name in names:
        for base in BASES[name]:
            text = dumps(base)
            for _ in range(120):
                r = rng.random()
                k = rng.randint(0, len(text))
                if r < 0.3:
                    t = text[:k]
                elif r < 0.7:
                    t = text[:k] + rng.choice(SYNTAX_BITS) + text[k:]
                elif r < 0.85:
                    t = text[:k] + text[k + 1:]
                else:
                    t = text[:k] + rng.choice(SYNTAX_BITS) + text[k + rng.randint(0, 3):]
                if t:
                    yield name, t
    for t in ["{", "[", '{"a"', '{"a":', '{"a":1', '{"a" 1}', "[1 2]", '"abc', '"\\x"', '"\\u12"', '"\\u1234',
              "nan", "tru", "-", "--1", "1 2", "{} {}", " ", "\t\n", '{"a":"\x01"}', "{'a':1}", '{"a":01}',
              '{"a":1.}', '{"a":.5}', '{"a":1e}', '{"a":-}', '{"\\ud800":1}', '"\\ud83d\\ude00"', "[" * 30,
              '{"a":[1,2,]}', '{,}', '{"a":1,,"b":2}', '\ufeff{}', '{"claim":"x"}\x00', "\x00"]:
        yield "ClaimVerificationRequest", t


QUERY_VALUES = ["", "a", "ab", "abc", "x" * 150, "x" * 151, "x" * 80, "x" * 81, "recent", "score", "Score", "top",
                "0", "1", "20", "21", "100", "101", "-1", "abc", "1.0", "1.5", " 7 ", "1_0", "+5", "1e2", "é" * 3,
                "😀" * 3, "99999999999999999999", "5.", "null"]


def query_cases(rng):
    for name, model in models.QUERIES.items():
        fields = list(model.model_fields)
        seen = set()
        for _ in range(400):
            pairs = []
            for f in fields:
                r = rng.random()
                if r < 0.35:
                    continue
                pairs.append([f, rng.choice(QUERY_VALUES)])
                if r > 0.9:
                    pairs.append([f, rng.choice(QUERY_VALUES)])
            if rng.random() < 0.2:
                pairs.append(["unknown", "1"])
            rng.shuffle(pairs)
            key = json.dumps(pairs)
            if key not in seen:
                seen.add(key)
                yield name, pairs
        for f in fields:
            for v in QUERY_VALUES:
                yield name, [["q", "abcd"], [f, v]] if f != "q" else [[f, v]]


def expected_query(model, pairs):
    present = {}
    for k, v in pairs:
        if k in model.model_fields:
            present[k] = v  # Starlette's QueryParams.get keeps the last value
    try:
        m = model.model_validate(present)
    except ValidationError as e:
        errs = _encode_errors(e.errors(include_url=False))
        for err in errs:
            if err["type"] == "missing":
                err["input"] = None
        return errs, None
    return None, m.model_dump(mode="json")


# ------------------------------------------------- hostile and edge inputs
# Deterministic (no shared rng), generated after the others so that adding
# them leaves every earlier case as it was.

YEAR0 = ["0000-01-01", "0000-02-29", "0000-12-31", "0000-02-30", "0000-01-01T00:00:00", "0000-01-01T00:00:00Z",
         "0000-01-01 00:00:00+01:00", "0000-01-01T00:00:01", "0000-01-01T00:00", -62167219200000, -62167219200000.0,
         "-62167219200000", -62135596800000, -62135596800001, -62167305600000, "0001-01-01", "0001-01-01T00:00:00",
         -62135596800000.0, "-62135683200000"]
LONE = ["a\ud800bc", "\udc00", "abc\udbff", "\ud83d\ude00\ud800x"]
BIG_INTS = [10 ** 20, -(10 ** 20), 2 ** 63, -(2 ** 63) - 1, "100000000000000000000", 1e20]


def edge_cases():
    """(shape, text, deviation) triples: dates in year 0, lone surrogates
    in every string and key, integers beyond int64 in every int field."""
    def text(doc):
        return esc_surrogates(dumps(doc))

    base = BASES["ClaimVerificationRequest"][1]
    for v in YEAR0:
        yield "ClaimVerificationRequest", text(dict(base, asOf=v)), None
    for name, model in models.SHAPES.items():
        schema = Schema(model)
        for b in BASES[name][:1]:
            for path, sub, _ in paths(schema, b, schema.root):
                if isinstance(path[-1], int) and not isinstance(get(b, path[:-1]), list):
                    continue
                s_res, _ = schema.nonnull(sub)
                vals = list(LONE)
                if s_res.get("type") == "integer" or (s_res.get("type") == "array" and
                                                     schema.nonnull(s_res.get("items", {}))[0].get("type") == "integer"):
                    big = BIG_INTS if s_res.get("type") == "integer" else [[1, x] for x in BIG_INTS]
                    vals += big
                for v in vals:
                    try:
                        doc = put(b, path, v)
                    except (KeyError, IndexError, TypeError):
                        continue
                    yield name, text(doc), None
            for prefix, _ in objects(schema, b, schema.root):
                for extra in ({"\ud800": 1}, {"zz": 1, "y\udc00y": [1], "\ud800": 2}):
                    doc = copy.deepcopy(b)
                    get(doc, prefix).update(extra) if prefix else doc.update(extra)
                    yield name, text(doc), None
    sig = copy.deepcopy(BASES["NicheSignalInput"][0])
    for eng in ({"\ud800": 1}, {"a": "x", "a": 1}, {"a": "x", "b": 1, "a": "y"}):
        yield "NicheSignalInput", text(dict(sig, engagement=eng)), None
    head = text(dict(sig, engagement={"a": 1}))[:-1]
    yield "NicheSignalInput", head.replace('{"a":1}', '{"a":"x","b":2,"a":3}') + "}", None
    yield "NicheSignalInput", head.replace('{"a":1}', '{"a":1,"b":"x","a":"y","c":-1}') + "}", None


RAW_VALUES = ["%ZZ", "%ZZinvoice", "%zzabc", "%", "%4", "%41%4", "%e2%82abc", "%C3%A9%C3%A9%C3%A9", "a+b+c",
              "\xe9\xe9\xe9", "%00abc", "1%2B1", "%32%30", "%2", "1%", "%ed%a0%80abc", "%C3\xa9%A9x", "%f0%9f",
              "sc%6Fre", "re%63ent", "+20", "2%200"]


def raw_query_cases():
    for name, model in models.QUERIES.items():
        for f in model.model_fields:
            for v in RAW_VALUES:
                yield name, (f + "=" + v) if f == "q" else "q=abcd&" + f + "=" + v
        for raw in ["q", "q=", "=abcd", "q=abcd;sort=recent", "&&q=abcd&&", "q=abcd&limit=%ZZ&sort=%ZZ",
                    "q=abc&q", "q=%ZZ%ZZ&limit=1&limit=%ZZ", "q+=abcd", "%71=abcd", "q=abcd&li%6Dit=2"]:
            yield name, raw


@contextlib.contextmanager
def open_gz(name):
    """A text writer to a gzip file without a timestamp, so that runs are
    byte-for-byte reproducible."""
    with open(os.path.join(OUT, name), "wb") as raw:
        with gzip.GzipFile(filename="", fileobj=raw, mode="wb", compresslevel=9, mtime=0) as gz:
            with io.TextIOWrapper(gz, encoding="utf-8") as text:
                yield text


def main():
    rng = random.Random(20260601)
    n_body = 0
    with open_gz("golden_body.jsonl.gz") as f:
        def write(name, text, edge):
            case = {"shape": name, "input": text}
            try:
                case["errors"], case["value"] = expected_body(models.SHAPES[name], text)
            except BigInt:
                if not edge:
                    return 0
                case["errors"], case["value"], case["deviation"] = None, None, "int64"
            except (Skip, ValueError):
                return 0
            try:
                line = esc_surrogates(dumps(case))
                line.encode("utf-8")
            except (ValueError, UnicodeEncodeError):
                return 0
            f.write(line + "\n")
            return 1
        for gen in (body_cases, syntax_cases):
            for name, text in gen(rng):
                n_body += write(name, text, False)
        seen = set()
        for name, text, _ in edge_cases():
            if (name, text) not in seen:
                seen.add((name, text))
                n_body += write(name, text, True)
    n_query = 0
    with open_gz("golden_query.jsonl.gz") as f:
        for name, pairs in query_cases(rng):
            errors, value = expected_query(models.QUERIES[name], pairs)
            f.write(dumps({"shape": name, "query": pairs, "errors": errors, "value": value}) + "\n")
            n_query += 1
        for name, raw in raw_query_cases():
            # Starlette: parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
            errors, value = expected_query(models.QUERIES[name], parse_qsl(raw, keep_blank_values=True))
            f.write(dumps({"shape": name, "rawQuery": raw, "errors": errors, "value": value}) + "\n")
            n_query += 1
    print(f"{n_body} body cases, {n_query} query cases")


if __name__ == "__main__":
    main()
