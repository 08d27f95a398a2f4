#!/usr/bin/env bash
# Fetches Queen's official client test suites (clients/client-js, client-py,
# client-go of queen-mq/queen) into .tmp/queen-suites/src, never into the
# tree, and installs what each needs from its registry:
#   - JavaScript: `npm install` of the client's package.json (axios, pg, uuid);
#   - Python: a virtual environment with the client and pytest, pytest-asyncio,
#     asyncpg;
#   - Go: `go mod download` of the client's module.
# The source is a bare git repository of queen-mq/queen (SUITES_REPO; default
# the machine's mirror), or a clone of SUITES_REPO_URL when no such directory
# exists. Files whose blobs the repository does not hold (a shallow mirror
# leaves large binaries out) are skipped: the suites never read them.
# Idempotent: a second run with the same commit reuses what is there.
set -euo pipefail
cd "$(dirname "$0")/.."

SUITES_REPO="${SUITES_REPO:-/work/.mirror/queen-mq+queen/repo}"
SUITES_REPO_URL="${SUITES_REPO_URL:-https://github.com/queen-mq/queen.git}"
OUT=.tmp/queen-suites/src
say() { printf '== queen-suites: %s\n' "$*" >&2; }

if ! git --git-dir="$SUITES_REPO" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  SUITES_REPO=.tmp/queen-suites/queen.git
  if [ ! -d "$SUITES_REPO" ]; then
    say "cloning $SUITES_REPO_URL"
    git clone -q --bare --depth 1 "$SUITES_REPO_URL" "$SUITES_REPO"
  fi
fi
commit=$(git --git-dir="$SUITES_REPO" rev-parse HEAD)
if [ "$(cat "$OUT/.commit" 2>/dev/null)" = "$commit" ]; then
  say "suites of $commit already fetched"
  exit 0
fi

rm -rf "$OUT" && mkdir -p "$OUT"
say "extracting clients/ of $commit from $SUITES_REPO"
for client in client-js client-py client-go; do
  git --git-dir="$SUITES_REPO" ls-tree -r HEAD "clients/$client" | while read -r mode _type blob path; do
    target="$OUT/${path#clients/}"
    mkdir -p "$(dirname "$target")"
    git --git-dir="$SUITES_REPO" cat-file blob "$blob" >"$target" 2>/dev/null || { rm -f "$target"; say "skipped $path (blob not in the repository)"; continue; }
    if [ "$mode" = 100755 ]; then chmod +x "$target"; fi
  done
done

say 'installing the JavaScript suite'"'"'s packages (npm)'
(cd "$OUT/client-js" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
say "installing the Python suite's packages (pip, in $OUT/client-py/.venv)"
(cd "$OUT/client-py" && python3 -m venv .venv && .venv/bin/pip install -q -e . pytest pytest-asyncio asyncpg)
say "downloading the Go suite's modules"
(cd "$OUT/client-go" && go mod download)
echo "$commit" >"$OUT/.commit"
say "ready in $OUT"
