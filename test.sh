#!/usr/bin/env bash
# Every check CI runs, over every Go module in the repository:
# formatting, go vet, staticcheck, and the test suites under the race detector.
# Usage: ./test.sh        (CI runs exactly this through .ci/run)
set -euo pipefail
cd "$(dirname "$0")"

STATICCHECK_VERSION=v0.8.2 # staticcheck 2026.2.2; fetched from the Go module proxy
FUZZTIME=${FUZZTIME:-5s}    # per fuzz target; docs/chaos.md has the long runs

# Every directory holding a go.mod is a module: the core at the root and the
# nested ones (interop/ needs k8s.io/client-go, which the core must not).
mapfile -t modules < <(git ls-files '*go.mod' 2>/dev/null | xargs -rn1 dirname | sort -u)
[ ${#modules[@]} -gt 0 ] || modules=(.)

step() { printf '\n==> %s\n' "$*"; }

unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change these files:"; echo "$unformatted"; exit 1
fi

for m in "${modules[@]}"; do
  step "module $m: go vet"
  (cd "$m" && go vet ./...)
  step "module $m: staticcheck"
  (cd "$m" && go run "honnef.co/go/tools/cmd/staticcheck@${STATICCHECK_VERSION}" ./...)
  step "module $m: go test -race"
  (cd "$m" && go test -race -count=1 -timeout 20m ./...)
done

# Every fuzz target for a short run on top of its checked-in corpus (which
# `go test` above already replayed). fuzz.sh lists the targets with what each
# one guards; a target missing from that list fails here, so none is
# forgotten. A finding fails the run and leaves the crasher under
# testdata/fuzz as a regression seed.
step "fuzz: every target for ${FUZZTIME}"
missing=0
while IFS=: read -r file name; do
  if ! grep -q "\"./$(dirname "$file") ${name}\"" fuzz.sh; then
    echo "fuzz.sh does not list $name ($file)"; missing=1
  fi
done < <(git grep -o -E '^func Fuzz[A-Za-z0-9_]+' -- '*_test.go' ':!interop' | sed -E 's/:func /:/')
[ "$missing" -eq 0 ] || exit 1
./fuzz.sh "$FUZZTIME"
