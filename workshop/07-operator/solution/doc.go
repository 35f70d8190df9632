// Command solution is exercise 7's operator, built: each Website in your
// namespace becomes a ConfigMap with its page and a Deployment serving it,
// both owned by the Website (so the garbage collector removes them with
// it), and the Website's status says when its Pods are Ready.
//
//	kubectl --server $SERVER apply -f workshop/manifests/website-crd.yaml       # step 1
//	go run ./cmd/controller-manager --server $SERVER --collect-websites           # the room's
//	go run ./workshop/07-operator/solution -server $SERVER -namespace $NS         # steps 2-4
//	kubectl --server $SERVER -n $NS create -f workshop/manifests/website.yaml
//
// controllers/website is the same operator as a package (example 14 and
// the chaos run use it); this file is the exercise's shape of it, in one
// place. `go run ./cmd/controller-manager --controllers website` runs the
// package for every namespace.
package main
