#!/usr/bin/env python3
"""A small JSON Schema validator (standard library only) for the subset
docs/report.schema.json uses: type (string or list), required, properties,
additionalProperties (bool or schema), items, enum, minimum.

Usage: validate_schema.py SCHEMA.json DOCUMENT.json [--require-key PATH]...
"""
import json
import sys

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(value, schema, path, errors):
    types = schema.get("type")
    if types is not None:
        if isinstance(types, str):
            types = [types]
        if not any(TYPES[t](value) for t in types):
            errors.append("%s: %r is not of type %s" % (path, value if not isinstance(value, (dict, list)) else type(value).__name__, "|".join(types)))
            return
    if "enum" in schema and value not in schema["enum"]:
        errors.append("%s: %r not in %r" % (path, value, schema["enum"]))
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        errors.append("%s: %r < minimum %r" % (path, value, schema["minimum"]))
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append("%s: missing required field '%s'" % (path, key))
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            if key in props:
                validate(v, props[key], path + "." + key, errors)
            elif extra is False:
                errors.append("%s: unexpected field '%s'" % (path, key))
            elif isinstance(extra, dict):
                validate(v, extra, path + "." + key, errors)
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            validate(v, schema["items"], "%s[%d]" % (path, i), errors)


def main():
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    with open(sys.argv[2]) as f:
        doc = json.load(f)
    errors = []
    validate(doc, schema, "$", errors)
    args = sys.argv[3:]
    while args:
        flag, key = args[0], args[1]
        args = args[2:]
        assert flag == "--require-key"
        node = doc
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                errors.append("missing %s" % key)
                break
            node = node[part]
    for e in errors[:20]:
        print("FAIL: " + e)
    if errors:
        sys.exit(1)
    print("PASS schema: %d ops, %d layers" % (len(doc.get("ops", [])), len(doc.get("layers", []))))


if __name__ == "__main__":
    main()
