#!/usr/bin/env bash
# capture.sh captures the catalog of real MCP servers' own tools/list that the tool search
# evaluation ranks (eval_test.go): each server below is installed at a pinned version from npm,
# started over stdio without credentials (placeholder values where a server will not start
# without one; listing tools never uses them), and its tools/list is written to
# catalog/NAME.json with its source (package@version). The Go SDK's everything server is taken
# from EVERYTHING_SERVER (the conformance server of the go-sdk's examples). Tried and left out:
# @modelcontextprotocol/server-redis and @azure-devops/mcp, which do not answer initialize
# without a reachable service. Re-run it to refresh the catalog; the evaluation itself runs offline
# from the checked-in files.
#
# Usage: NODE=path/to/node NPM_PREFIX=dir EVERYTHING_SERVER=path ./capture.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
node=${NODE:-node}
prefix=${NPM_PREFIX:?set NPM_PREFIX to a directory for the installs}
out="$here/catalog"
mkdir -p "$out" "$prefix"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# name  package@version  binary  [args...]
servers=(
  "filesystem|@modelcontextprotocol/server-filesystem@2026.8.31|mcp-server-filesystem|$scratch"
  "memory|@modelcontextprotocol/server-memory@2026.8.31|mcp-server-memory"
  "everything|@modelcontextprotocol/server-everything@2026.8.31|mcp-server-everything|stdio"
  "sequentialthinking|@modelcontextprotocol/server-sequential-thinking@2026.8.31|mcp-server-sequential-thinking"
  "github|@modelcontextprotocol/server-github@2025.4.8|mcp-server-github"
  "gitlab|@modelcontextprotocol/server-gitlab@2025.4.25|mcp-server-gitlab"
  "slack|@modelcontextprotocol/server-slack@2025.4.25|mcp-server-slack"
  "maps|@modelcontextprotocol/server-google-maps@0.6.2|mcp-server-google-maps"
  "brave|@modelcontextprotocol/server-brave-search@0.6.2|mcp-server-brave-search"
  "puppeteer|@modelcontextprotocol/server-puppeteer@2025.5.12|mcp-server-puppeteer"
  "redis|@modelcontextprotocol/server-redis@2025.4.25|mcp-server-redis|redis://127.0.0.1:1"
  "postgres|@modelcontextprotocol/server-postgres@0.6.2|mcp-server-postgres|postgresql://127.0.0.1:1/none"
  "playwright|@playwright/mcp@0.0.83|playwright-mcp"
  "chromedevtools|chrome-devtools-mcp@1.11.0|chrome-devtools-mcp"
  "desktopcommander|@wonderwhy-er/desktop-commander@0.2.52|desktop-commander"
  "notion|@notionhq/notion-mcp-server@2.5.2|notion-mcp-server"
  "kubernetes|mcp-server-kubernetes@4.1.7|mcp-server-kubernetes"
  "context7|@upstash/context7-mcp@4.1.1|context7-mcp"
  "mongodb|mongodb-mcp-server@3.0.4|mongodb-mcp-server"
  "circleci|@circleci/mcp-server-circleci@0.20.0|mcp-server-circleci"
  "eaplaywright|@executeautomation/playwright-mcp-server@1.0.12|playwright-mcp-server"
)

# Placeholders for servers that refuse to start without a setting; never valid credentials.
export GITHUB_PERSONAL_ACCESS_TOKEN=placeholder GITLAB_PERSONAL_ACCESS_TOKEN=placeholder \
  SLACK_BOT_TOKEN=placeholder SLACK_TEAM_ID=placeholder GOOGLE_MAPS_API_KEY=placeholder \
  BRAVE_API_KEY=placeholder CIRCLECI_TOKEN=placeholder PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
  MDB_MCP_TELEMETRY=disabled DO_NOT_TRACK=1

for s in "${servers[@]}"; do
  IFS='|' read -r name pkg bin args <<<"$s"
  dir="$prefix/$name"
  if [ ! -x "$dir/node_modules/.bin/$bin" ]; then
    mkdir -p "$dir"
    (cd "$dir" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error "$pkg" >/dev/null)
  fi
  # shellcheck disable=SC2086
  if (cd "$scratch" && "$node" "$here/capture.mjs" "$pkg" "$node" "$dir/node_modules/.bin/$bin" $args) >"$out/$name.json.tmp"; then
    mv "$out/$name.json.tmp" "$out/$name.json"
    echo "captured $name ($pkg)"
  else
    rm -f "$out/$name.json.tmp"
    echo "skipped $name ($pkg): it did not list its tools" >&2
  fi
done

if [ -n "${EVERYTHING_SERVER:-}" ]; then
  "$node" "$here/capture.mjs" "github.com/modelcontextprotocol/go-sdk everything server" "$EVERYTHING_SERVER" >"$out/gosdk-everything.json"
  echo "captured gosdk-everything"
fi
