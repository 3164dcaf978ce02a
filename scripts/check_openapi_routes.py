#!/usr/bin/env python3
"""Fails when a route the server registers is missing from the OpenAPI spec.

Usage: check_openapi_routes.py [--strict] SPEC ROUTES_FILE

ROUTES_FILE lists the server's route table, one route a line:

    POST /v1/compile
    GET /v1/executables/{key}
    GET,HEAD /healthz          # several methods: comma or '|' separated

Blank lines and '#' comments are ignored ('-' as ROUTES_FILE reads standard
input). Path parameters match whatever their names ('{key}' in the router
equals '{id}' in the spec), since only their position is part of the route.

After the path, `kiln serve --print-routes` says what each route accepts:

    POST /v1/compile query=chip,plan body=text/plain,application/json untyped-body

When any line carries `query=` or `body=`, every route's query parameters
must equal the operation's `in: query` parameters (path-level ones included)
and its body types the keys of the operation's requestBody content (a route
without `body=` takes no body); other words after the path are ignored.

HEAD needs no route of its own when GET is served: the router answers HEAD
from the GET route. Operations in the spec that the server does not serve are
listed as a warning; with --strict they fail too, except those marked
`x-kiln-status: planned`.

Exit status: 0 when every served route is described (and its contract
matches), 1 when some are not (or, with --strict, when the spec describes
routes nobody serves), 2 on unreadable input. Needs PyYAML (Debian: python3-yaml).
"""

import argparse
import re
import sys

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_PARAM = re.compile(r"\{[^{}/]*\}")


class InputError(Exception):
    """A spec or route file that cannot be read; the message says where."""


def normalize_path(path):
    """The route with parameter names erased: /v1/executables/{}."""
    return _PARAM.sub("{}", path)


def parse_routes(lines, source="routes"):
    """Returns {(METHOD, normalized path): original path} from route lines."""
    return {key: path for key, (path, _) in parse_route_lines(lines, source).items()}


def parse_route_lines(lines, source="routes"):
    """Returns {(METHOD, normalized path): (original path, contract)} from route lines.

    contract is None when the line says nothing after the path, else
    {"query": set, "body": set} from its query= and body= fields.
    """
    routes = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) < 2 or not fields[1].startswith("/"):
            raise InputError(f"{source}:{number}: expected 'METHOD /path', got {raw.strip()!r}")
        contract = None
        for field in fields[2:]:
            name, _, value = field.partition("=")
            if name in ("query", "body"):
                contract = contract or {"query": set(), "body": set()}
                contract[name] = {item for item in value.split(",") if item}
        for method in re.split(r"[,|]", fields[0]):
            method = method.strip().upper()
            if method.lower() not in HTTP_METHODS:
                raise InputError(f"{source}:{number}: unknown HTTP method {method!r}")
            routes[(method, normalize_path(fields[1]))] = (fields[1], contract)
    return routes


def spec_operations(spec, source="spec"):
    """Returns {(METHOD, normalized path): (path, planned)} from a loaded OpenAPI document."""
    if not isinstance(spec, dict) or not isinstance(spec.get("paths"), dict):
        raise InputError(f"{source}: no 'paths' object; is this an OpenAPI document?")
    operations = {}
    for path, item in spec["paths"].items():
        if not isinstance(item, dict):
            raise InputError(f"{source}: paths[{path!r}] is not an object")
        for method in HTTP_METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            planned = isinstance(operation, dict) and operation.get("x-kiln-status") == "planned"
            operations[(method.upper(), normalize_path(path))] = (path, planned)
    return operations


def _resolve(spec, node):
    """Follows a local $ref ('#/components/...') to what it names."""
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if not ref.startswith("#/"):
            raise InputError(f"only local $refs are supported, got {ref!r}")
        node = spec
        for part in ref[2:].split("/"):
            node = node[part]
    return node


def spec_contracts(spec):
    """Returns {(METHOD, normalized path): {"query": set, "body": set}} from the spec."""
    contracts = {}
    for path, item in spec["paths"].items():
        shared = item.get("parameters", [])
        for method in HTTP_METHODS:
            operation = item.get(method)
            if not isinstance(operation, dict):
                continue
            query = set()
            for parameter in list(shared) + list(operation.get("parameters", [])):
                parameter = _resolve(spec, parameter)
                if parameter.get("in") == "query":
                    query.add(parameter["name"])
            body = _resolve(spec, operation.get("requestBody", {}))
            contracts[(method.upper(), normalize_path(path))] = {
                "query": query, "body": set(body.get("content", {}))}
    return contracts


def compare_contracts(served_lines, spec):
    """Returns 'METHOD /path: ...' lines where a route's contract differs from the spec.

    Only when some route line carries a contract; HEAD routes are skipped.
    """
    if not any(contract is not None for _, contract in served_lines.values()):
        return []
    described = spec_contracts(spec)
    problems = []
    for (method, path), (original, contract) in sorted(served_lines.items()):
        spec_side = described.get((method, path))
        if spec_side is None or method == "HEAD":
            continue
        contract = contract or {"query": set(), "body": set()}
        for what, label in (("query", "query parameters"), ("body", "body types")):
            extra = sorted(contract[what] - spec_side[what])
            missing = sorted(spec_side[what] - contract[what])
            if extra:
                problems.append(f"{method} {original}: {label} served but not in the spec: "
                                f"{', '.join(extra)}")
            if missing:
                problems.append(f"{method} {original}: {label} in the spec but not served: "
                                f"{', '.join(missing)}")
    return problems


def compare(served, described):
    """Returns (missing, unserved, unserved_planned) as sorted 'METHOD /path' lists.

    missing: served but not described (HEAD counts as described when GET is).
    unserved: described but not served (HEAD counts as served when GET is).
    """
    def has(table, method, path):
        return (method, path) in table or (method == "HEAD" and ("GET", path) in table)

    missing = sorted(f"{m} {served[(m, p)]}" for (m, p) in served if not has(described, m, p))
    unserved, planned = [], []
    for (method, path), (original, is_planned) in described.items():
        if has(served, method, path):
            continue
        (planned if is_planned else unserved).append(f"{method} {original}")
    return missing, sorted(unserved), sorted(planned)


def load_spec(path):
    try:
        import yaml  # PyYAML; Debian python3-yaml
    except ImportError as error:
        raise InputError("PyYAML is required (Debian: apt-get install python3-yaml)") from error
    try:
        with open(path, encoding="utf-8") as handle:
            return yaml.safe_load(handle)
    except OSError as error:
        raise InputError(f"{path}: {error.strerror}") from error
    except yaml.YAMLError as error:
        raise InputError(f"{path}: not valid YAML: {error}") from error


def read_lines(path):
    if path == "-":
        return sys.stdin.read().splitlines()
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().splitlines()
    except OSError as error:
        raise InputError(f"{path}: {error.strerror}") from error


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("spec", help="the OpenAPI document (YAML or JSON)")
    parser.add_argument("routes", help="the server's route table, 'METHOD /path' lines; '-' for stdin")
    parser.add_argument("--strict", action="store_true",
                        help="also fail on described routes the server does not serve")
    args = parser.parse_args(argv)

    try:
        spec = load_spec(args.spec)
        described = spec_operations(spec, args.spec)
        served_lines = parse_route_lines(read_lines(args.routes), args.routes)
        served = {key: path for key, (path, _) in served_lines.items()}
        contract_problems = compare_contracts(served_lines, spec)
    except InputError as error:
        print(f"check_openapi_routes: {error}", file=sys.stderr)
        return 2
    if not served:
        print(f"check_openapi_routes: {args.routes}: no routes listed", file=sys.stderr)
        return 2

    missing, unserved, planned = compare(served, described)
    for route in missing:
        print(f"MISSING from {args.spec}: {route}")
    for route in unserved:
        print(f"{'ERROR' if args.strict else 'warning'}: described but not served: {route}")
    for route in planned:
        print(f"note: planned, not served yet: {route}")
    for problem in contract_problems:
        print(f"CONTRACT differs: {problem}")
    failed = bool(missing) or bool(contract_problems) or (args.strict and bool(unserved))
    print(f"check_openapi_routes: {len(served)} served routes, {len(missing)} missing from the spec, "
          f"{len(unserved)} described but not served, {len(planned)} planned, "
          f"{len(contract_problems)} contract differences")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
