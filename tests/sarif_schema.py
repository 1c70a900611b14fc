"""The parts of SARIF 2.1.0 that ``plangraph lint --format sarif`` writes, as a JSON Schema
written from the OASIS standard's text (section numbers in the descriptions): the objects it
uses, their required properties, value ranges and enumerations. The SARIF tests validate every
log against it, and against the cross-references a schema cannot express (``ruleIndex``)."""

from __future__ import annotations

from typing import Any

_MESSAGE: dict[str, Any] = {
    "description": "3.11 message: text is required where no id is given",
    "type": "object",
    "required": ["text"],
    "properties": {"text": {"type": "string"}},
}
_MULTIFORMAT: dict[str, Any] = {
    "description": "3.12 multiformatMessageString",
    "type": "object",
    "required": ["text"],
    "properties": {"text": {"type": "string"}, "markdown": {"type": "string"}},
}
_LEVEL: dict[str, Any] = {
    "description": "3.27.10 level, 3.50.3 reportingConfiguration.level",
    "enum": ["none", "note", "warning", "error"],
}
_REGION: dict[str, Any] = {
    "description": "3.30 region: line and column numbers are 1-based",
    "type": "object",
    "properties": {
        "startLine": {"type": "integer", "minimum": 1},
        "startColumn": {"type": "integer", "minimum": 1},
        "endLine": {"type": "integer", "minimum": 1},
        "endColumn": {"type": "integer", "minimum": 1},
    },
    "anyOf": [{"required": ["startLine"]}, {"required": ["charOffset"]}],
}
_ARTIFACT_LOCATION: dict[str, Any] = {
    "description": "3.4 artifactLocation: a relative URI reference and its base id",
    "type": "object",
    "required": ["uri"],
    "properties": {
        "uri": {"type": "string", "minLength": 1, "not": {"pattern": "^/|\\\\"}},
        "uriBaseId": {"type": "string"},
    },
}
_RESULT: dict[str, Any] = {
    "description": "3.27 result",
    "type": "object",
    "required": ["message", "ruleId", "level", "locations"],
    "properties": {
        "ruleId": {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$"},
        "ruleIndex": {"type": "integer", "minimum": -1},
        "level": _LEVEL,
        "message": _MESSAGE,
        "locations": {
            "description": "3.28 location, 3.29 physicalLocation",
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["physicalLocation"],
                "properties": {
                    "physicalLocation": {
                        "type": "object",
                        "required": ["artifactLocation"],
                        "properties": {
                            "artifactLocation": _ARTIFACT_LOCATION,
                            "region": _REGION,
                        },
                    }
                },
            },
        },
    },
}
_RULE: dict[str, Any] = {
    "description": "3.49 reportingDescriptor",
    "type": "object",
    "required": ["id", "shortDescription", "defaultConfiguration"],
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "name": {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9]*$"},
        "shortDescription": _MULTIFORMAT,
        "help": _MULTIFORMAT,
        "defaultConfiguration": {
            "type": "object",
            "properties": {"level": _LEVEL},
        },
    },
}
SARIF_SUBSET: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "description": "3.13 sarifLog",
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"enum": ["2.1.0"]},
        "runs": {
            "type": "array",
            "items": {
                "description": "3.14 run",
                "type": "object",
                "required": ["tool", "results"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "description": "3.19 toolComponent",
                                "type": "object",
                                "required": ["name"],
                                "properties": {
                                    "name": {"type": "string", "minLength": 1},
                                    "version": {"type": "string"},
                                    "rules": {"type": "array", "items": _RULE},
                                },
                            }
                        },
                    },
                    "results": {"type": "array", "items": _RESULT},
                },
            },
        },
    },
}
