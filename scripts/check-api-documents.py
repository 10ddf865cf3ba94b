#!/usr/bin/env python3
"""Checks documents the API writes against docs/api/openapi.yaml.

Reads a JSON object from stdin: {"samples": [{"schema": NAME, "value": JSON}], "routes": [[METHOD, PATH]]}
("routes" optional).
NAME is a schema of components/schemas (`Job`), or an operation's answer (`GET /v1/groups 200`)
or body (`PUT /v1/cameras/{camera}/time body`). For the schema of a stream's events
(`LiveStreamEvent`), the value is one event, {"event": NAME, "data": OBJECT}, and its data is
checked against the schema the stream gives that event. Each value must validate against its schema and,
stricter than JSON Schema, every member of every object must be one the schema names: a member
added to a document and not to the YAML fails. The routes must be exactly the YAML's operations
under /v1, when they are given. Prints one line per problem and exits 1 when there is any.

Usage: scripts/check-api-documents.py [openapi.yaml] < samples.json   (UnleashedAPITests and DaemonTests run it)
"""
import json
import sys

import jsonschema
import yaml

METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "docs/api/openapi.yaml"
    with open(path) as file:
        document = yaml.safe_load(file)
    request = json.load(sys.stdin)
    problems = []

    for sample in request["samples"]:
        name, value = sample["schema"], sample["value"]
        schema = find(document, name)
        if schema is None:
            problems.append(f"{name}: the YAML has no such schema")
            continue
        if is_stream(schema):
            # A Server-Sent Event, as {"event": NAME, "data": OBJECT}: its data is checked against
            # the schema the stream gives that name (`contentSchema` of the event's `data:` line).
            content = event_schema(schema, value)
            if content is None:
                problems.append(f"{name}: the YAML names no event '{value.get('event')}' on this stream")
                continue
            name, schema, value = f"{name} '{value['event']}'", content, value["data"]
        resolver = {"components": document["components"], **schema}
        try:
            jsonschema.validate(value, resolver, cls=jsonschema.Draft202012Validator)
        except jsonschema.ValidationError as error:
            where = "/".join(str(part) for part in error.absolute_path)
            problems.append(f"{name}: at '{where}': {error.message}")
        problems.extend(f"{name}: {problem}" for problem in undeclared(document, schema, value, ""))

    if "routes" not in request:
        report(problems)
    declared = {(method.upper(), route) for route, operations in document["paths"].items() if route.startswith("/v1/")
                for method in operations if method in METHODS}
    served = {tuple(route) for route in request["routes"]}
    problems.extend(f"{method} {route}: served but not in the YAML" for method, route in sorted(served - declared))
    problems.extend(f"{method} {route}: in the YAML but not served by the daemon" for method, route in sorted(declared - served))
    report(problems)


def report(problems):
    for problem in problems:
        print(problem)
    sys.exit(1 if problems else 0)


def find(document, name):
    """The schema that `name` stands for, or None."""
    if " " not in name:
        return document["components"]["schemas"].get(name)
    method, route, part = name.split(" ")
    operation = document["paths"].get(route, {}).get(method.lower())
    if operation is None:
        return None
    holder = operation.get("requestBody") if part == "body" else operation.get("responses", {}).get(part)
    if holder is None:
        return None
    holder = resolve(document, holder)
    return holder.get("content", {}).get("application/json", {}).get("schema")


def is_stream(schema):
    """Whether `schema` describes the events of a stream: choices by `event` with JSON `data`."""
    return any("contentSchema" in choice.get("properties", {}).get("data", {}) for choice in schema.get("oneOf", []))


def event_schema(schema, value):
    """The schema of the data of the event `value` names, or None when the stream has no such event."""
    for choice in schema["oneOf"]:
        properties = choice.get("properties", {})
        if properties.get("event", {}).get("const") == value.get("event"):
            return properties["data"]["contentSchema"]
    return None


def resolve(document, schema):
    while isinstance(schema, dict) and "$ref" in schema:
        node = document
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def undeclared(document, schema, value, where):
    """Members of `value` that `schema` does not name, as messages; [] when there are none."""
    schema = resolve(document, schema)
    if not isinstance(schema, dict):
        return []
    for key in ("oneOf", "anyOf"):
        # Choices that only say which members are required leave the members to the schema itself.
        if key in schema and "properties" not in schema:
            # The value fits one of the choices: the one naming all its members, if any does.
            outcomes = [undeclared(document, choice, value, where) for choice in schema[key] if fits(document, choice, value)]
            return min(outcomes, key=len) if outcomes else []
    if isinstance(value, dict):
        properties = {}
        for part in [schema] + [resolve(document, part) for part in schema.get("allOf", [])]:
            properties.update(part.get("properties", {}))
        extra = next((part.get("additionalProperties") for part in [schema] + schema.get("allOf", [])
                      if isinstance(part, dict) and isinstance(part.get("additionalProperties"), dict)), None)
        problems = []
        for key, member in value.items():
            if key in properties:
                problems.extend(undeclared(document, properties[key], member, f"{where}.{key}"))
            elif extra is not None:
                problems.extend(undeclared(document, extra, member, f"{where}.{key}"))
            else:
                problems.append(f"'{where}.{key}' is written by the document but not declared in the YAML")
        return problems
    if isinstance(value, list) and "items" in schema:
        return [problem for index, item in enumerate(value)
                for problem in undeclared(document, schema["items"], item, f"{where}[{index}]")]
    return []


def fits(document, schema, value):
    try:
        jsonschema.validate(value, {"components": document["components"], **resolve(document, schema)},
                            cls=jsonschema.Draft202012Validator)
        return True
    except jsonschema.ValidationError:
        return False


if __name__ == "__main__":
    main()
