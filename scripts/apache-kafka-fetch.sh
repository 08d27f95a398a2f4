#!/usr/bin/env bash
# Brings Apache Kafka's broker and tools from Maven Central into
# .cache/apache-kafka/<version>/libs (the jars listed by
# test/apache-kafka/pom.xml and everything they depend on), for the tests that
# compare the gateway with the real thing and for `npm run apache-kafka`.
#
# Idempotent and quick when the cache is complete: the jars are copied into a
# scratch folder and renamed into place only once all of them are there, with
# a stamp of the pom they came from, so an interrupted run or a changed pom
# fetches again and anything else returns at once. Several callers at once
# (parallel test files) wait for each other on a lock.
#
# Prints `kafka_libs=<absolute folder>` on stdout when done; what it is doing
# goes to stderr. Needs java (17 or later) and mvn; as root, installs Debian's
# packages for them when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

say() { printf '== %s\n' "$*" >&2; }
die() { printf 'apache-kafka-fetch: %s\n' "$*" >&2; exit 1; }

if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing Java 17 and Maven from Debian's packages"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jdk-headless maven >/dev/null
  else
    die "Apache Kafka needs java (17 or later) and mvn on the PATH: install a JDK and Maven (Debian: apt-get install openjdk-17-jdk-headless maven), then run this again."
  fi
fi

POM=test/apache-kafka/pom.xml
VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$POM" | head -n 1)
[ -n "$VERSION" ] || die "$POM names no <kafka.version>."
CACHE=$ROOT/.cache/apache-kafka/$VERSION
LIBS=$CACHE/libs
STAMP=$(sha256sum "$POM" | cut -d' ' -f1)

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9

if [ ! -f "$CACHE/pom.sha256" ] || [ "$(cat "$CACHE/pom.sha256")" != "$STAMP" ] || [ ! -d "$LIBS" ]; then
  say "fetching Apache Kafka $VERSION from Maven Central into ${LIBS#"$ROOT"/} (about 55 MB, once)"
  started=$(date +%s)
  rm -rf "$LIBS" "$LIBS.partial" "$CACHE/pom.sha256"
  mvn -q -B -f "$POM" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIBS.partial" >"$CACHE/fetch.log" 2>&1 \
    || { tail -n 30 "$CACHE/fetch.log" >&2; die "Maven could not fetch Apache Kafka $VERSION (log above, whole log in ${CACHE#"$ROOT"/}/fetch.log)."; }
  ls "$LIBS.partial"/kafka_2.13-"$VERSION".jar >/dev/null 2>&1 || die "Maven finished without kafka_2.13-$VERSION.jar in ${LIBS#"$ROOT"/}.partial."
  mv "$LIBS.partial" "$LIBS"
  echo "$STAMP" >"$CACHE/pom.sha256"
  rm -f "$CACHE/fetch.log"
  say "Apache Kafka $VERSION fetched in $(( $(date +%s) - started )) s"
fi

echo "kafka_libs=$LIBS"
