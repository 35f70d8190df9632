// Package serviceaccount is the ServiceAccount controller: every active
// namespace gets a ServiceAccount named "default", created when the
// namespace appears and created again if someone deletes it. Pods run as
// it unless they name another.
//
// Where it sits: two informers (Namespaces, ServiceAccounts) feed one
// workqueue of namespace names: a namespace's add or update queues it, a
// ServiceAccount's deletion queues its namespace. The reconcile reads the
// namespace and its ServiceAccounts from the caches and creates what is
// missing; a namespace that is not Active (being deleted) is left alone.
//
// It mirrors k8s.io/kubernetes/pkg/controller/serviceaccount
// (serviceaccounts_controller.go: ServiceAccountsController,
// syncNamespace, DefaultServiceAccountsControllerOptions). The tokens
// controller beside it (which gave each ServiceAccount a token Secret
// before 1.24) is not part of it.
package serviceaccount
