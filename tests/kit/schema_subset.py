"""A tiny JSON Schema validator for the subset of JSON Schema the kit's schemas use (no new dependency).

Supported keywords: ``type`` (object, array, string, number, integer, boolean, null; one name), ``properties``,
``required``, ``additionalProperties`` (false, or a schema for every other property), ``items`` (one schema),
``minItems``, ``const``, ``enum``, ``pattern`` (re.search), ``minimum``, ``maximum``; ``$schema``, ``title`` and
``description`` are annotations. A schema using any other keyword is refused, so a schema never asks for a rule
this validator would skip.
"""
from __future__ import annotations

import re

KEYWORDS = {"type", "properties", "required", "additionalProperties", "items", "minItems", "const", "enum", "pattern",
            "minimum", "maximum", "$schema", "title", "description"}
_TYPES = {"object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
          "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
          "null": lambda v: v is None,
          "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
          "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)}


def errors(value, schema: dict, path: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (empty when it validates), each with its JSON path."""
    unknown = set(schema) - KEYWORDS
    if unknown:
        raise ValueError(f"{path}: the schema uses keywords this validator does not know: {sorted(unknown)}")
    out: list[str] = []
    kind = schema.get("type")
    if kind is not None and not _TYPES[kind](value):
        return [f"{path}: expected {kind}, got {type(value).__name__}"]
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: expected {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        out.append(f"{path}: {value[:60]!r} does not match {schema['pattern']!r}")
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{path}: {value} < {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{path}: {value} > {schema['maximum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        out += [f"{path}: missing {key!r}" for key in schema.get("required", []) if key not in value]
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                out += errors(item, props[key], f"{path}.{key}")
            elif extra is False:
                out.append(f"{path}: unexpected property {key!r}")
            elif isinstance(extra, dict):
                out += errors(item, extra, f"{path}.{key}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(f"{path}: fewer than {schema['minItems']} items")
        if "items" in schema:
            for i, item in enumerate(value):
                out += errors(item, schema["items"], f"{path}[{i}]")
    return out
