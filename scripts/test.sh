#!/usr/bin/env bash
# `npm test`: makes this machine able to run the whole suite, then runs it.
#
# Idempotent: each step first looks whether its work is already done (a
# package installed, a server answering, a binding built) and does nothing
# then, so a second run starts the tests within a second or two.
#
#   1. Debian's packages the tests use: PostgreSQL and Redis, kcat, and the
#      -dev libraries librdkafka is built against.
#   2. The test-only librdkafka binding (@confluentinc/kafka-javascript).
#      `npm install` skips its install script (package.json, allowScripts):
#      the prebuilt binary cannot be downloaded on every machine, and building
#      it needs the libraries of step 1, which a user who only runs the
#      gateway should not need. Built here against the system's libraries.
#   3. PostgreSQL's first cluster started on loopback, with a `queen_test`
#      role and database; every test run works in schemas of its own in it
#      and drops them (test/support/postgres.ts). Redis started on 6379.
#   4. Apache Kafka's jars from Maven Central (scripts/apache-kafka-fetch.sh),
#      the reference the comparison suites start beside the gateway, and Kafka
#      Streams and Connect for the frameworks suite.
#   5. The client matrix's Python clients (scripts/compat-setup.sh python) in
#      a virtual environment under .cache/compat, for test/compat.
#   6. vitest, with DATABASE_URL set, so a PostgreSQL that cannot be reached
#      fails the run instead of skipping the PostgreSQL suites.
#
# Arguments go to vitest: `npm test -- test/e2e/kcat.test.ts`.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '== %s\n' "$*" >&2; }
die() { printf 'npm test: %s\n' "$*" >&2; exit 1; }

# Root runs apt-get and the service commands as it is; anyone else through sudo.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@" || die "\"$*\" needs root: run it once with sudo, or run npm test as root."
  else die "\"$*\" needs root and sudo is not installed: run npm test as root, or install what it names yourself."
  fi
}

# ─── 1. Debian packages ───────────────────────────────────────────────────────
PACKAGES=(
  postgresql redis-server                                           # the servers
  postgresql-15-auto-failover                                       # pg_autoctl: the replicated store of test/support/pg-ha.ts
  kcat                                                              # a client the end-to-end tests drive
  chromium                                                          # the web console's tests drive it headless (playwright-core)
  libzstd-dev liblz4-dev libssl-dev libsasl2-dev zlib1g-dev         # what librdkafka links against
)
missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || die "these packages are missing and this machine has no apt-get: ${missing[*]}."
  say "installing Debian packages: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # policy-rc.d-less containers may try to start the services here; we start them below either way.
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ─── 2. The librdkafka binding ────────────────────────────────────────────────
RDKAFKA_DIR=node_modules/@confluentinc/kafka-javascript
[ -d "$RDKAFKA_DIR" ] || die "node_modules is missing or incomplete: run npm install first."
if [ ! -f "$RDKAFKA_DIR/build/Release/confluent-kafka-javascript.node" ]; then
  mkdir -p .tmp
  say "building librdkafka for @confluentinc/kafka-javascript against the system's libraries (about two minutes, once)"
  CKJS_LINKING=dynamic npm rebuild --dangerously-allow-all-scripts @confluentinc/kafka-javascript >.tmp/rdkafka-build.log 2>&1 \
    || { tail -n 30 .tmp/rdkafka-build.log >&2; die "the librdkafka binding did not build (log above, whole log in .tmp/rdkafka-build.log)."; }
  rm -f .tmp/rdkafka-build.log
  [ -f "$RDKAFKA_DIR/build/Release/confluent-kafka-javascript.node" ] || die "the librdkafka build finished without producing its binding."
fi

# ─── 3. PostgreSQL and Redis ──────────────────────────────────────────────────
PG_USER=queen_test
PG_PASSWORD=queen_test
PG_DATABASE=queen_test

read -r pg_version pg_cluster pg_port pg_status _ < <(pg_lsclusters --no-header 2>/dev/null | head -n 1; echo)
if [ -z "${pg_version:-}" ]; then
  pg_version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  say "creating PostgreSQL $pg_version cluster main"
  as_root pg_createcluster "$pg_version" main >/dev/null
  read -r pg_version pg_cluster pg_port pg_status _ < <(pg_lsclusters --no-header | head -n 1)
fi
if ! pg_isready -q -h 127.0.0.1 -p "$pg_port"; then
  say "starting PostgreSQL $pg_version/$pg_cluster on port $pg_port"
  as_root pg_ctlcluster --skip-systemctl-redirect "$pg_version" "$pg_cluster" start
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p "$pg_port" && break; sleep 1; done
  pg_isready -q -h 127.0.0.1 -p "$pg_port" || die "PostgreSQL $pg_version/$pg_cluster did not answer on 127.0.0.1:$pg_port within 30 s (see /var/log/postgresql/)."
fi
export DATABASE_URL="postgres://$PG_USER:$PG_PASSWORD@127.0.0.1:$pg_port/$PG_DATABASE"
if ! PGPASSWORD=$PG_PASSWORD PGCONNECT_TIMEOUT=5 psql -X -q -h 127.0.0.1 -p "$pg_port" -U "$PG_USER" -d "$PG_DATABASE" -c 'select 1' >/dev/null 2>&1; then
  say "creating PostgreSQL role and database $PG_USER"
  as_root runuser -u postgres -- psql -X -q -p "$pg_port" -v ON_ERROR_STOP=1 <<SQL >/dev/null
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER') THEN
    CREATE ROLE $PG_USER LOGIN PASSWORD '$PG_PASSWORD';
  ELSE
    ALTER ROLE $PG_USER LOGIN PASSWORD '$PG_PASSWORD';
  END IF;
END \$\$;
SELECT 'CREATE DATABASE $PG_DATABASE OWNER $PG_USER' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$PG_DATABASE')\gexec
SQL
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  say "starting Redis on 127.0.0.1:6379"
  as_root mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/queen-test.log
  for _ in $(seq 1 20); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.5; done
  redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 || die "Redis did not answer on 127.0.0.1:6379 (see /var/log/redis/queen-test.log)."
fi
export REDIS_URL="redis://127.0.0.1:6379"

# ─── 4. Apache Kafka, the reference ───────────────────────────────────────────
bash scripts/apache-kafka-fetch.sh >/dev/null || die "Apache Kafka could not be fetched (see above); the suites that compare with it cannot run."
bash scripts/apache-kafka-fetch.sh frameworks >/dev/null || die "Kafka Streams and Connect could not be fetched or built (see above); test/frameworks cannot run."

# ─── 5. The client matrix's Python clients ────────────────────────────────────
# test/compat/compat.test.ts runs confluent-kafka for Python: a virtual
# environment in .cache/compat, built once (scripts/compat-setup.sh).
bash scripts/compat-setup.sh python >/dev/null || die "the client matrix's Python clients could not be installed (see above); test/compat cannot run."

# ─── 6. The suite ─────────────────────────────────────────────────────────────
exec node_modules/.bin/vitest run "$@"
