#!/usr/bin/env python3
"""Check JSON documents against a JSON Schema, for the shell tests.

usage: htschema.py SCHEMA FILE...

Only the keywords t/data/report-schema.json uses are known: type (a name
or a list of names), required, properties, items, minimum, pattern and
enum; any other keyword is an error in the schema, so that a schema never
seems to check what this validator ignores.  Prints one line per violation
("FILE: PATH: what"), and exits 0 when every file conforms, 1 otherwise,
2 on a usage error or a file that is not JSON.
"""
import json
import re
import sys

KNOWN = {"$comment", "type", "required", "properties", "items", "minimum",
         "pattern", "enum"}


def is_type(v, name):
    # bool is an int in Python; JSON keeps them apart.
    if name == "object":
        return isinstance(v, dict)
    if name == "array":
        return isinstance(v, list)
    if name == "string":
        return isinstance(v, str)
    if name == "boolean":
        return isinstance(v, bool)
    if name == "null":
        return v is None
    if name == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if name == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    raise ValueError("unknown type %r in schema" % name)


def check(schema, v, path, errs):
    unknown = set(schema) - KNOWN
    if unknown:
        raise ValueError("%s: schema keywords not supported: %s" %
                         (path, ", ".join(sorted(unknown))))
    if "type" in schema:
        types = schema["type"]
        if isinstance(types, str):
            types = [types]
        if not any(is_type(v, t) for t in types):
            errs.append("%s: %s is not of type %s" %
                        (path, json.dumps(v)[:60], "|".join(types)))
            return
    if "enum" in schema and v not in schema["enum"]:
        errs.append("%s: %s is not one of %s" %
                    (path, json.dumps(v), schema["enum"]))
    if "minimum" in schema and is_type(v, "number") and \
            v < schema["minimum"]:
        errs.append("%s: %s is below %s" % (path, v, schema["minimum"]))
    if "pattern" in schema and isinstance(v, str) and \
            re.search(schema["pattern"], v) is None:
        errs.append("%s: %r does not match %s" %
                    (path, v, schema["pattern"]))
    if isinstance(v, dict):
        for k in schema.get("required", []):
            if k not in v:
                errs.append("%s: key %r missing" % (path, k))
        for k, sub in schema.get("properties", {}).items():
            if k in v:
                check(sub, v[k], "%s.%s" % (path, k), errs)
    if isinstance(v, list) and "items" in schema:
        for i, item in enumerate(v):
            check(schema["items"], item, "%s[%d]" % (path, i), errs)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        schema = json.load(f)
    status = 0
    for name in argv[2:]:
        try:
            with open(name) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print("%s: %s" % (name, e))
            return 2
        errs = []
        check(schema, doc, "$", errs)
        for e in errs[:20]:
            print("%s: %s" % (name, e))
        if errs:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
