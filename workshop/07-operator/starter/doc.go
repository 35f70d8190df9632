// Command starter is exercise 7's operator, to build: steps 1 and 2 (the
// CustomResourceDefinition, informers whose handlers queue a Website's
// key) are done; the reconcile is empty. Steps 3 and 4 are the TODOs in
// reconcile: each Website becomes a ConfigMap with its page and a
// Deployment serving it, both owned by the Website (so the garbage
// collector removes them with it), and its status says when its Pods are
// Ready. Run it after each step. The solution is in ../solution.
//
//	kubectl --server $SERVER apply -f workshop/manifests/website-crd.yaml       # step 1
//	go run ./cmd/controller-manager --server $SERVER --collect-websites           # the room's
//	go run ./workshop/07-operator/starter -server $SERVER -namespace $NS         # steps 2-4
//	kubectl --server $SERVER -n $NS create -f workshop/manifests/website.yaml
package main
