#!/usr/bin/env bash
# Lints schema/openapi.yaml with Redocly CLI (the recommended-strict ruleset:
# structural validity, $refs, examples checked against their schemas, an
# operationId, summary and 4xx answer on every operation; warnings fail).
#
# The linter is installed with npm into build/npm-tools (never globally) on
# first use; later runs reuse it. Without npm the script says so and exits 0,
# so a machine without Node still passes the rest of the test suite.
#
# Usage: scripts/lint_openapi.sh [SPEC]   (default: schema/openapi.yaml)
# Env:   KILN_NPM_TOOLS   where to install the linter (default build/npm-tools)
set -euo pipefail
cd "$(dirname "$0")/.."

spec=${1:-schema/openapi.yaml}
tools=${KILN_NPM_TOOLS:-build/npm-tools}
# Pinned: later releases need a newer Node than Debian 12's.
redocly_version=2.77.0
redocly="$tools/node_modules/.bin/redocly"

if ! command -v npm >/dev/null 2>&1; then
  echo "lint_openapi: npm not found; skipping the OpenAPI lint of $spec" >&2
  exit 0
fi

if [[ ! -x "$redocly" ]] || [[ "$("$redocly" --version 2>/dev/null)" != "$redocly_version" ]]; then
  echo "lint_openapi: installing @redocly/cli@$redocly_version into $tools" >&2
  mkdir -p "$tools"
  npm install --prefix "$tools" --no-audit --no-fund --loglevel=error \
    "@redocly/cli@$redocly_version" >&2
fi

# Telemetry off; the Node version banner goes to stderr and is harmless.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
"$redocly" lint --extends recommended-strict --format stylish "$spec"
echo "lint_openapi: $spec is valid"
