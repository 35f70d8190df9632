#!/usr/bin/env bash
# Runs every Go fuzz target of the core module, one after the other, for a
# while each. A plain `go test` already replays every seed corpus
# (testdata/fuzz/<Target>/); this script fuzzes for real.
#
#   ./fuzz.sh               5 minutes per target (the documented long run)
#   ./fuzz.sh 10s           10 seconds per target (the short run CI can afford)
#   ./fuzz.sh 1m Selector   only the targets whose name matches Selector
#
# A finding is written to <package>/testdata/fuzz/<Target>/ by go test and
# the script stops with its exit code; fix the bug and keep the input: it
# becomes part of the seed corpus. See docs/chaos.md.
set -euo pipefail
cd "$(dirname "$0")"

fuzztime=${1:-5m}
filter=${2:-}

# package  target: every parser a client or a server reads untrusted bytes with.
targets=(
  "./api FuzzEventDecode"                    # one watch event (api.Event.UnmarshalJSON)
  "./api FuzzObjectRoundTrip"                # any object body
  "./api FuzzParseLabelSelector"             # ?labelSelector=
  "./api FuzzParseFieldSelector"             # ?fieldSelector=
  "./api FuzzParseResourceVersion"           # ?resourceVersion= and metadata.resourceVersion
  "./api FuzzSelectorLimits"                 # selector size limits; set lookup by binary search
  "./api FuzzDecodeEvent"                    # a watch event decoded where it lies in a stream (one scan)
  "./api/protobuf FuzzTranscode"             # protobuf bodies and watch objects <-> JSON, every served kind
  "./api/protobuf FuzzConform"               # every built-in object stored: typed check, unknown fields dropped
  "./apiserver/handlers FuzzListParams"      # every list/watch query parameter
  "./apiserver/negotiation FuzzDecodeObject" # create/update bodies (JSON)
  "./apiserver/negotiation FuzzProtobufBody" # create/update bodies (protobuf, as kubectl sends)
  "./apiserver/patch FuzzPatch"              # merge, JSON and strategic merge patches; 4xx or bounded valid JSON
  "./apiserver/patch FuzzApply"              # server-side apply bodies (YAML) and ownership
  "./apiserver/handlers FuzzContinueToken"   # ?continue=
  "./client FuzzEventDecoder"                # a watch stream cut into events, however it is split
  "./client FuzzStreamWatcher"               # a watch body end to end: events, ERROR, close, Stop
)

for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  if [[ -n "$filter" && "$name" != *"$filter"* ]]; then
    continue
  fi
  printf '\n==> %s %s for %s\n' "$pkg" "$name" "$fuzztime"
  go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime"
done
