// Package interop proves that listwatch speaks the real Kubernetes
// list-watch protocol, by holding it against the real thing.
//
// It is a separate Go module (listwatch/interop) because it imports
// k8s.io/client-go, k8s.io/apimachinery and k8s.io/api, which the core
// module must never depend on. Nothing in the core imports it; it only
// tests and measures the core from the outside:
//
//	client-go clientset ─┐
//	client-go pager      │
//	client-go RetryWatcher├── HTTP ──► listwatch apiserver (in-process, 127.0.0.1:0)
//	client-go informers  │
//	kubectl              ─┘
//
//	recorded kube-apiserver v1.37 traffic ──► client-go's decoder and listwatch's StreamWatcher
//	listwatch apiserver output ──► ShapeDiff ◄── the same requests recorded from kube-apiserver
//
// What lives where:
//
//   - typed_test.go: the typed clientset (k8s.io/client-go/kubernetes)
//     creating, reading, updating and deleting ConfigMaps and Deployments,
//     and the apierrors.Is* checks users branch on.
//   - defaultconfig_test.go: a clientset and informer factory with
//     client-go's DEFAULT content config (protobuf both ways) doing CRUD,
//     list, watch and sync on Pods, Services, Deployments, Secrets and
//     ConfigMaps.
//   - watch_test.go: tools/pager paging, a watch from a list's
//     resourceVersion, a watch from a compacted one (410).
//   - retrywatcher_test.go: tools/watch.RetryWatcher across server watch
//     timeouts and a connection kill.
//   - informer_test.go: informers.SharedInformerFactory converging under
//     random writes, re-listing only on 410.
//   - selectors_test.go: label and field selectors on list and watch.
//   - kubectl_test.go: the installed kubectl binary against our server.
//   - fixtures_test.go: the recordings in testdata/fixtures decoded by
//     client-go and by our client, and our server's answers compared with
//     them shape for shape (ShapeDiff, in shape.go).
//   - bench_test.go, bench_informer_test.go: side-by-side benchmarks
//     (client-go vs listwatch: informer throughput and memory, watch
//     decoding; our apiserver's fan-out), written up in
//     docs/performance.md. Run them with
//     cd interop && go test -run '^$' -bench . -benchmem .
//   - yaml_test.go: our YAML reader (apiserver/yamljson) against
//     sigs.k8s.io/yaml, kube-apiserver's, body by body: the same JSON,
//     the same errors, the same keys given twice.
//   - harness_test.go: starting our apiserver in-process, client-go
//     clientsets for it, and requestCounter, the http.RoundTripper wrapper
//     that counts list and watch requests and 410s on the client side.
//
// The only non-test code is ShapeDiff, the comparison the fixture tests
// use: it mirrors nothing in Kubernetes; it is how we check that our JSON
// has the shape kube-apiserver's has, while ignoring values that can never
// match (uids, timestamps, resourceVersions) and fields only a real
// apiserver writes (managedFields).
package interop
