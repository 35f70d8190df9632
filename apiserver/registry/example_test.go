package registry_test

import (
	"fmt"

	"listwatch/apiserver/registry"
)

// Every resource a server serves, with the store prefix its objects live
// under, as kube-apiserver lays out etcd (both Event APIs keep their
// objects, core/v1 Events, under /registry/events/).
func ExampleBuiltin() {
	for _, res := range registry.Builtin() {
		fmt.Println(res.APIVersion(), res.Name, res.Namespaced, res.Key("default", "x"))
	}
	// Output:
	// v1 namespaces false /registry/namespaces/x
	// v1 configmaps true /registry/configmaps/default/x
	// v1 secrets true /registry/secrets/default/x
	// v1 pods true /registry/pods/default/x
	// v1 services true /registry/services/default/x
	// v1 events true /registry/events/default/x
	// v1 serviceaccounts true /registry/serviceaccounts/default/x
	// v1 podtemplates true /registry/podtemplates/default/x
	// apps/v1 deployments true /registry/deployments/default/x
	// apps/v1 replicasets true /registry/replicasets/default/x
	// batch/v1 cronjobs true /registry/cronjobs/default/x
	// events.k8s.io/v1 events true /registry/events/default/x
	// coordination.k8s.io/v1 leases true /registry/leases/default/x
}
