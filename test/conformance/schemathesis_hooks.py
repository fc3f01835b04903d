"""Schemathesis hooks for the fuzz passes (loaded through SCHEMATHESIS_HOOKS by fuzz-run.ts)."""
import json

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx, value):
    # The import body is documented as a string (one JSON object per line); anything else the
    # fuzzer draws is sent as one JSON line, which the service must refuse line by line.
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return (json.dumps(value) + "\n").encode("utf-8")
