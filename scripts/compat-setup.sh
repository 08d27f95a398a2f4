#!/usr/bin/env bash
# The client matrix's toolchains (npm run compat, test/compat/), built once
# into .cache/compat/ and kept by a stamp of what they came from:
#
#   python  a virtual environment with confluent-kafka, kafka-python, aiokafka
#           and their codec libraries (test/compat/python/requirements.txt);
#   go      the franz-go, Sarama and kafka-go scenario programs
#           (test/compat/go), modules from the Go module proxy;
#   java    the Java client's scenario program against kafka-clients of the
#           version test/apache-kafka/pom.xml names (test/compat/java).
#
# `bash scripts/compat-setup.sh [python|go|java]...` (default: all three)
# prints `python=<interpreter>`, `go_bin=<folder>`, `java_classpath=<classpath>`
# on stdout; what it does goes to stderr. Idempotent: a part whose stamp
# matches returns at once; a part is built into FOLDER.partial and renamed into
# place only when whole. Parallel callers wait for each other on a lock.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

say() { printf '== %s\n' "$*" >&2; }
die() { printf 'compat-setup: %s\n' "$*" >&2; exit 1; }

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(python go java)
for part in "${parts[@]}"; do
  case "$part" in python | go | java) ;; *) die "unknown part \"$part\": name python, go, java or nothing for all three." ;; esac
done

mkdir -p .cache/compat
exec 9>.cache/compat/.lock
flock 9

# stamp_of PATH...: one hash of the files under PATHs (and the tool versions in $EXTRA).
stamp_of() { (echo "${EXTRA:-}"; find "$@" -type f -not -path '*/target/*' -not -name '*.pyc' | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -c1-16; }

# build NAME FOLDER COMMAND...: runs COMMAND (which fills FOLDER.partial) unless FOLDER exists.
build() {
  local name=$1 folder=$2
  shift 2
  [ -d "$folder" ] && return 0
  say "$name"
  local started=$SECONDS
  rm -rf "$folder.partial"
  mkdir -p "$folder.partial"
  "$@" >"$folder.log" 2>&1 || { tail -n 30 "$folder.log" >&2; die "$name failed (log above, whole log in ${folder#"$ROOT"/}.log)."; }
  mv "$folder.partial" "$folder"
  rm -f "$folder.log"
  say "$name: done in $((SECONDS - started)) s"
}

python_env() {
  python3 -m venv "$1" && "$1/bin/pip" install -q --disable-pip-version-check -r test/compat/python/requirements.txt
}

go_programs() {
  (cd test/compat/go && go mod download && for program in franzgo sarama kafkago; do go build -o "$1/$program" "./$program"; done)
}

java_program() {
  local version=$1 out=$2
  mvn -q -B -f test/compat/java/pom.xml -Dkafka.version="$version" -Dbuild.folder="$out/target" \
    compile dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$out/libs"
}

for part in "${parts[@]}"; do
  case "$part" in
    python)
      command -v python3 >/dev/null || die "python3 is not on the PATH: install Python 3.9 or later."
      stamp=$(EXTRA=$(python3 --version 2>&1) stamp_of test/compat/python/requirements.txt)
      folder=$ROOT/.cache/compat/python-$stamp
      # A venv is not relocatable: build it in place, marked done by a file.
      if [ ! -f "$folder/.done" ]; then
        say "installing the Python clients into ${folder#"$ROOT"/}"
        rm -rf "$folder"
        python_env "$folder" >"$folder.log" 2>&1 || { tail -n 30 "$folder.log" >&2; die "the Python clients did not install (log in ${folder#"$ROOT"/}.log)."; }
        touch "$folder/.done"
        rm -f "$folder.log"
      fi
      echo "python=$folder/bin/python"
      ;;
    go)
      command -v go >/dev/null || die "go is not on the PATH: install Go 1.26 or later."
      stamp=$(EXTRA=$(go version) stamp_of test/compat/go)
      folder=$ROOT/.cache/compat/go-$stamp
      build "building the franz-go, Sarama and kafka-go programs into ${folder#"$ROOT"/}" "$folder" go_programs "$folder.partial"
      echo "go_bin=$folder"
      ;;
    java)
      VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' test/apache-kafka/pom.xml | head -n 1)
      [ -n "$VERSION" ] || die "test/apache-kafka/pom.xml names no <kafka.version>."
      stamp=$(EXTRA=$VERSION stamp_of test/compat/java)
      folder=$ROOT/.cache/compat/java-$stamp
      build "building the Java client's program against kafka-clients $VERSION into ${folder#"$ROOT"/}" "$folder" java_program "$VERSION" "$folder.partial"
      echo "java_classpath=$folder/target/classes:$folder/libs/*"
      ;;
  esac
done
