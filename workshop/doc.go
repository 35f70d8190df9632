// Package workshop holds the workshop's programs (docs/workshop.md): for
// each coding exercise a starter that compiles and runs, with TODOs where
// the attendee writes code, and a solution beside it; and in manifests/
// the YAML the exercises create with kubectl.
//
//	02-rewatch/starter   exercises 2 and 3: the article's watch loop, to break and fix
//	02-rewatch/solution  re-watch from the last resourceVersion, bookmarks, re-list on 410
//	07-operator/starter  exercise 7: the Website operator with an empty reconcile
//	07-operator/solution the operator with its children, owner references and status
//
// Every program takes -server, -token and -namespace (internal/target), so
// a room can share one `go run ./cmd/apiserver --revisions-from-clock=false`
// with each attendee in a namespace of their own. workshop_test.go builds
// every starter and runs every solution against its exercise's check.
package workshop
