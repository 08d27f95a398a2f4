#!/usr/bin/env bash
# Apache Kafka's Java side of the tests, from Maven Central, into .cache/:
#
#   broker       the broker and tools (test/apache-kafka/pom.xml and everything
#                they depend on) in .cache/apache-kafka/<version>/libs, for
#                startApacheKafka() and `npm run apache-kafka`;
#   java-client  the Java client driver of the end-to-end suite
#                (test/java-client), compiled against kafka-clients of the same
#                version, in .cache/java-client;
#   frameworks   the frameworks suite's Java side (test/java-frameworks): Kafka
#                Streams of the same version and the Streams applications built
#                against it, and Kafka Connect with the FileStream connectors
#                (a release older, see connect/pom.xml there), in
#                .cache/java-frameworks.
#
# `bash scripts/apache-kafka-fetch.sh [broker|java-client|frameworks]...`
# (default: broker and java-client) prints `kafka_libs=<folder>`,
# `java_client=<classpath>`, and `java_frameworks=<classpath>` with
# `kafka_connect=<classpath>` on stdout; what it does goes to stderr.
#
# Idempotent and quick when the cache is complete: each part is built into a
# scratch folder and renamed into place only when whole, with a stamp of the
# files it came from, so an interrupted run or a changed pom or source builds
# again and anything else returns at once. Several callers at once (parallel
# test files) wait for each other on a lock. Needs java (17 or later) and
# mvn; as root, installs Debian's packages for them when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

say() { printf '== %s\n' "$*" >&2; }
die() { printf 'apache-kafka-fetch: %s\n' "$*" >&2; exit 1; }

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(broker java-client)
for target in "${targets[@]}"; do
  case "$target" in broker | java-client | frameworks) ;; *) die "unknown part \"$target\": name broker, java-client, frameworks or nothing for the first two." ;; esac
done

if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing Java 17 and Maven from Debian's packages"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jdk-headless maven >/dev/null
  else
    die "Apache Kafka needs java (17 or later) and mvn on the PATH: install a JDK and Maven (Debian: apt-get install openjdk-17-jdk-headless maven), then run this again."
  fi
fi

BROKER_POM=test/apache-kafka/pom.xml
VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$BROKER_POM" | head -n 1)
[ -n "$VERSION" ] || die "$BROKER_POM names no <kafka.version>."

mkdir -p .cache
exec 9>.cache/.apache-kafka.lock
flock 9

# build NAME FOLDER STAMP COMMAND...: runs COMMAND (which writes into FOLDER.partial)
# unless FOLDER holds a build of STAMP already; logs to FOLDER.log, shown on failure.
build() {
  local name=$1 folder=$2 stamp=$3
  shift 3
  [ -d "$folder" ] && [ "$(cat "$folder/.stamp" 2>/dev/null)" = "$stamp" ] && return 0
  say "$name"
  local started=$SECONDS
  rm -rf "$folder" "$folder.partial"
  mkdir -p "$(dirname "$folder")"
  "$@" >"$folder.log" 2>&1 || { tail -n 30 "$folder.log" >&2; die "$name failed (log above, whole log in ${folder#"$ROOT"/}.log)."; }
  echo "$stamp" >"$folder.partial/.stamp"
  mv "$folder.partial" "$folder"
  rm -f "$folder.log"
  say "$name: done in $((SECONDS - started)) s"
}

for target in "${targets[@]}"; do
  case "$target" in
    broker)
      LIBS=$ROOT/.cache/apache-kafka/$VERSION/libs
      build "fetching Apache Kafka $VERSION from Maven Central into ${LIBS#"$ROOT"/} (about 55 MB)" "$LIBS" "$(sha256sum "$BROKER_POM" | cut -d' ' -f1)" \
        mvn -q -B -f "$BROKER_POM" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIBS.partial"
      [ -f "$LIBS/kafka_2.13-$VERSION.jar" ] || die "${LIBS#"$ROOT"/} lacks kafka_2.13-$VERSION.jar: remove that folder and run this again."
      echo "kafka_libs=$LIBS"
      ;;
    java-client)
      DRIVER=$ROOT/.cache/java-client
      stamp=$( (echo "$VERSION"; find test/java-client -type f -not -path '*/target/*' | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -d' ' -f1)
      build "building the Java client driver against kafka-clients $VERSION into ${DRIVER#"$ROOT"/}" "$DRIVER" "$stamp" \
        mvn -q -B -f test/java-client/pom.xml -Dkafka.version="$VERSION" -Dbuild.folder="$DRIVER.partial/target" \
          compile dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$DRIVER.partial/libs"
      echo "java_client=$DRIVER/target/classes:$DRIVER/libs/*"
      ;;
    frameworks)
      FRAMEWORKS=$ROOT/.cache/java-frameworks
      stamp=$( (echo "$VERSION"; find test/java-frameworks -type f -not -path '*/target/*' | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -d' ' -f1)
      build_frameworks() {
        mvn -q -B -f test/java-frameworks/pom.xml -Dkafka.version="$VERSION" -Dbuild.folder="$FRAMEWORKS.partial/target" \
          compile dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$FRAMEWORKS.partial/libs" &&
          mvn -q -B -f test/java-frameworks/connect/pom.xml dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$FRAMEWORKS.partial/connect"
      }
      build "building Kafka Streams $VERSION, Kafka Connect and the frameworks suite's applications into ${FRAMEWORKS#"$ROOT"/} (about 130 MB)" "$FRAMEWORKS" "$stamp" build_frameworks
      echo "java_frameworks=$FRAMEWORKS/target/classes:$FRAMEWORKS/libs/*"
      echo "kafka_connect=$FRAMEWORKS/connect/*"
      ;;
  esac
done
