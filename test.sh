#!/usr/bin/env bash
# Every check CI runs, over every Go module in the repository: the
# repository is self-contained, formatting, go vet, staticcheck, the test
# suites under the race detector, and a short run of every fuzz target.
#
#   ./test.sh          everything, about 9½ minutes on 2 quiet cores (CI
#                      runs exactly this through .ci/run)
#   ./test.sh quick    the core module only: gofmt, go vet and its tests
#                      with -short (which leaves out the chaos runs, the
#                      memory-limit runs, running the docs' commands and
#                      the examples' long runs) and without the race
#                      detector; no staticcheck, no nested modules
#                      (interop/, etcd/, uitest/, tools/), no fuzzing.
#                      About 1½ minutes on 2 quiet cores once the build
#                      cache is warm (README.md says how that was measured).
#   ./test.sh stress   everything, as ./test.sh does, on a loaded machine:
#                      two busy loops per core (nproc) run from the first
#                      stage to the last and are killed when the run ends,
#                      however it ends (they also stop by themselves once
#                      this script is gone). A suite that passes only on a
#                      quiet machine fails here.
#   ./test.sh reference the reference module (reference/), which no run
#                      above includes: go vet, staticcheck, a build of
#                      the real etcd, kube-apiserver and kube-controller-
#                      manager, its tests, which start them, and the
#                      differential run: the recordings' script sent to
#                      kube-apiserver 1.37 and to ours, every difference
#                      fixed or explained in docs/kubectl-and-client-go.md.
#                      README.md ("The reference") gives its time and
#                      downloads.
#
# Before anything else, the run checks the tools its tests need besides Go
# (kubectl; for a full run Debian's chromium, installed when run as root)
# and fails there, naming the packages that need a missing one; the tests
# themselves fail, never skip, without it.
#
# Each stage prints one line when it ends, with its time, and the run ends
# with a table of them all. README.md ("Running the tests") says what each
# stage takes and what it downloads.
set -euo pipefail
cd "$(dirname "$0")"

STATICCHECK_VERSION=v0.8.2 # staticcheck 2026.2.2; fetched from the Go module proxy
FUZZTIME=${FUZZTIME:-5s}    # per fuzz target; docs/chaos.md has the long runs

mode=${1:-all}
label=$mode # what the summary calls this run
case "$mode" in
all | quick | reference) ;;
stress) mode=all ;;
-h | --help | help)
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
  ;;
*)
  echo "usage: ./test.sh [quick | stress | reference]" >&2
  exit 2
  ;;
esac

# Every directory holding a go.mod is a module: the core at the root and the
# nested ones (interop/ needs k8s.io/client-go, which the core must not).
mapfile -t all_modules < <(git ls-files '*go.mod' 2>/dev/null | xargs -rn1 dirname | sort -u)
[ ${#all_modules[@]} -gt 0 ] || all_modules=(.)
modules=("${all_modules[@]}")
if [ "$mode" = quick ]; then
  modules=(.)
fi
# reference/ compiles the real Kubernetes (minutes, hundreds of MB of
# modules): it has a run of its own, and the others say so out loud.
if [ "$mode" = reference ]; then
  modules=(reference)
else
  mapfile -t modules < <(printf '%s\n' "${modules[@]}" | grep -vx reference)
  echo "module reference: not in this run (it builds the real kube-apiserver); ./test.sh reference runs it"
fi

# stage NAME COMMAND...: runs one stage, prints a one-line result with its
# time, and remembers it for the summary (in a file, since the stages of a
# lane run in a subshell; see run_lane). A failing stage ends the run.
results=$(mktemp)
started=$SECONDS
duration() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
summary() {
  local rc=$?
  stop_lane
  stop_load
  if [ ! -s "$results" ]; then
    rm -f "$results"
    exit "$rc"
  fi
  printf '\n==> summary (./test.sh %s)\n' "$label"
  cat "$results"
  rm -f "$results"
  printf '%-6s %-48s %s\n' "$([ "$rc" -eq 0 ] && echo ok || echo FAIL)" "total" "$(duration $((SECONDS - started)))"
  exit "$rc"
}
trap summary EXIT
# An interrupt or a kill ends the run through the EXIT trap above, which
# stops the load and prints what ran.
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# A lane is a series of stages run in the background beside the stages in
# the foreground, its output kept in a file and printed when it ends, so
# that the two never interleave. The full run has one: the nested modules,
# beside the fuzzing (see the end of this script).
lane_pid=
lane_log=
run_lane() {
  lane_log=$(mktemp)
  "$@" >"$lane_log" 2>&1 &
  lane_pid=$!
}
# wait_lane waits for the lane, prints its output and returns its status.
wait_lane() {
  local rc=0
  wait "$lane_pid" || rc=$?
  lane_pid=
  printf '\n==> the nested modules, run beside the fuzzing:\n'
  cat "$lane_log"
  rm -f "$lane_log"
  return "$rc"
}
# stop_lane ends a lane still running when the run ends early (a failed
# stage, an interrupt), with every process it started.
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do
    kill_tree "$child"
  done
  kill "$1" 2>/dev/null || true
}
stop_lane() {
  [ -n "$lane_pid" ] || return 0
  kill_tree "$lane_pid"
  wait "$lane_pid" 2>/dev/null || true
  echo "==> stopped the nested modules' lane; its output so far:"
  cat "$lane_log"
  rm -f "$lane_log"
  lane_pid=
}

# The stress run's load: two busy loops per core. Each loop also checks
# that this script is alive, so none outlives it even if the script itself
# is killed without its traps (SIGKILL).
load_pids=()
start_load() {
  local n=$((2 * $(nproc))) i
  for ((i = 0; i < n; i++)); do
    sh -c 'while kill -0 "$1" 2>/dev/null; do :; done' busy-loop $$ &
    load_pids+=($!)
  done
  echo "==> stress: $n busy loops (two per core, nproc=$(nproc)) load the machine until the run ends"
}
stop_load() {
  [ ${#load_pids[@]} -gt 0 ] || return 0
  kill "${load_pids[@]}" 2>/dev/null || true
  wait "${load_pids[@]}" 2>/dev/null || true
  echo "==> stress: stopped the ${#load_pids[@]} busy loops"
  load_pids=()
}
stage() {
  local name=$1 start=$SECONDS rc=0
  shift
  printf '\n==> %s\n' "$name"
  "$@" || rc=$?
  local line
  line=$(printf '%-6s %-48s %s' "$([ "$rc" -eq 0 ] && echo ok || echo FAIL)" "$name" "$(duration $((SECONDS - start)))")
  echo "$line" >>"$results"
  echo "$line"
  return "$rc"
}

in_module() { (cd "$1" && shift && "$@"); }

gofmt_check() {
  local unformatted
  unformatted=$(gofmt -l $(git ls-files '*.go'))
  if [ -n "$unformatted" ]; then
    echo "gofmt would change these files:"
    echo "$unformatted"
    return 1
  fi
}

# The tools the tests run besides Go are checked before anything else, so a
# missing one fails the run at its start, naming the packages that need it
# (the tests themselves fail too, never skip: a skipped suite would pass
# unseen).
#
# module_of DIR: the module DIR belongs to (the longest module path above it).
module_of() {
  local dir=$1 best=. m
  for m in "${all_modules[@]}"; do
    [ "$m" != . ] && [[ "$dir/" == "$m/"* ]] && [ ${#m} -gt ${#best} ] && best=$m
  done
  echo "$best"
}
# kubectl_packages: the packages of this run's modules whose tests run
# kubectl (each finds it with exec.LookPath("kubectl") or at
# /usr/bin/kubectl).
kubectl_packages() {
  local dir
  while read -r dir; do
    if printf '%s\n' "${modules[@]}" | grep -qxF "$(module_of "$dir")"; then
      echo "$dir/"
    fi
  done < <(git grep -l -E 'LookPath\("kubectl"\)|"/usr/bin/kubectl"' -- '*_test.go' | xargs -rn1 dirname | sort -u)
}
ensure_kubectl() {
  local pkgs
  pkgs=$(kubectl_packages | tr '\n' ' ')
  [ -n "$pkgs" ] || return 0
  if command -v kubectl >/dev/null 2>&1; then
    echo "kubectl: $(command -v kubectl), for ${pkgs% }"
    return 0
  fi
  echo "kubectl is missing: the tests of ${pkgs% } run it."
  echo "Install kubectl (any recent release; https://kubernetes.io/docs/tasks/tools/) so that 'kubectl' is on PATH, then ./test.sh again."
  return 1
}
if [ "$label" = stress ]; then
  start_load
fi
stage "tools: kubectl" ensure_kubectl

# The browser tests (uitest/) drive Debian's Chromium. When it is missing,
# install it if we can (root, with apt-get); otherwise fail, naming the
# package: a missing browser must never turn into a silent skip.
chromium_present() {
  if [ -n "${LISTWATCH_CHROMIUM:-}" ]; then
    [ -x "$LISTWATCH_CHROMIUM" ] || { echo "LISTWATCH_CHROMIUM=$LISTWATCH_CHROMIUM is not an executable"; return 1; }
    return 0
  fi
  command -v chromium >/dev/null 2>&1
}
ensure_chromium() {
  if chromium_present; then
    echo "chromium: $(command -v chromium || echo "$LISTWATCH_CHROMIUM")"
    return 0
  fi
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "chromium is missing: installing Debian's chromium package"
    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium && chromium_present && return 0
  fi
  echo "the browser tests (uitest/) need Debian's 'chromium' package, which is missing and could not be installed:"
  echo "run 'apt-get install -y chromium' as root (or set LISTWATCH_CHROMIUM to a Chromium binary), then ./test.sh again"
  return 1
}
if [ "$mode" = all ] && printf '%s\n' "${modules[@]}" | grep -qx uitest; then
  stage "tools: Debian's chromium for uitest/" ensure_chromium
fi

# A fresh clone with nothing beside it must be complete: no file may point
# at a path outside the repository (docs/doccheck/paths.go says what counts).
stage "self-contained: no path outside the repo" \
  go test -count=1 -run '^TestNothingPointsOutsideTheRepository$' ./docs/doccheck
stage "gofmt" gofmt_check

# go test runs up to twice as many test binaries at once as there are
# cores (its default is as many): many of them spend their time waiting on
# sockets, timers and the processes they start, and with one per core a
# 2-core machine sat a third idle through the core module's tests.
test_procs=$((2 * $(nproc)))

# check_module M: the stages of one module.
check_module() {
  local m=$1
  stage "module $m: go vet" in_module "$m" go vet ./...
  if [ "$mode" = reference ]; then
    # The tests start the binaries, so they are built first (once: a
    # binary already in reference/bin is reused).
    stage "module $m: build etcd, kube-apiserver, kube-controller-manager" \
      in_module "$m" go run ./cmd/refcluster build
  fi
  if [ "$mode" != quick ]; then
    stage "module $m: staticcheck" in_module "$m" go run "honnef.co/go/tools/cmd/staticcheck@${STATICCHECK_VERSION}" ./...
  fi
  # -timeout only turns a hang into a failure with every goroutine's stack:
  # on a machine at load 35 the docs' commands alone took 19 minutes.
  if [ "$mode" = quick ]; then
    # No race detector in the quick run: it costs the tests more than
    # twice their CPU time (145 against 331 CPU-seconds), and the full run,
    # which CI runs, keeps it.
    stage "module $m: go test -short" in_module "$m" go test -short -count=1 -p "$test_procs" -timeout 45m ./...
  else
    stage "module $m: go test -race" in_module "$m" go test -race -count=1 -p "$test_procs" -timeout 45m ./...
  fi
  if [ "$mode" = reference ]; then
    # The recordings' script against kube-apiserver 1.37 and against our
    # apiserver at once; a difference docs/kubectl-and-client-go.md does
    # not explain fails the stage.
    stage "module $m: differential run, ours vs kube-apiserver 1.37" in_module "$m" go run ./cmd/recorder diff
  fi
}

# The nested modules one after another (the lane of the full run).
check_nested_modules() {
  local m
  for m in "${modules[@]}"; do
    [ "$m" = . ] || check_module "$m"
  done
}

if [ "$mode" != all ]; then
  for m in "${modules[@]}"; do
    check_module "$m"
  done
  exit 0
fi

check_module .
# The nested modules run in a lane beside the fuzzing below: fuzzing keeps
# both cores busy, the nested modules' tests mostly wait (for etcd, for
# the browser, for servers they start), and one after the other the two
# left a 2-core machine a third idle for four minutes.
run_lane check_nested_modules

# Every fuzz target for a short run on top of its checked-in corpus (which
# `go test` above already replayed). fuzz.sh lists the targets with what each
# one guards; a target missing from that list fails here, so none is
# forgotten. A finding fails the run and leaves the crasher under
# testdata/fuzz as a regression seed.
fuzz_listed() {
  local missing=0 file name
  while IFS=: read -r file name; do
    if ! grep -q "\"./$(dirname "$file") ${name}\"" fuzz.sh; then
      echo "fuzz.sh does not list $name ($file)"
      missing=1
    fi
  done < <(git grep -o -E '^func Fuzz[A-Za-z0-9_]+' -- '*_test.go' ':!interop' | sed -E 's/:func /:/')
  return "$missing"
}
fuzz_rc=0
stage "fuzz: fuzz.sh lists every target" fuzz_listed || fuzz_rc=$?
[ "$fuzz_rc" -ne 0 ] || stage "fuzz: every target for ${FUZZTIME}" ./fuzz.sh "$FUZZTIME" || fuzz_rc=$?
# The lane's stages are in the summary whichever ends first.
wait_lane
exit "$fuzz_rc"
