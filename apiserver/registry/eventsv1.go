package registry

// eventsV1 is events.k8s.io/v1 Events: the newer shape of an Event
// (regarding, note, reportingController, series) that kube-scheduler and
// client-go's tools/events write.
//
// Where we differ from Kubernetes: kube-apiserver keeps one collection of
// Events. events.k8s.io/v1 events and core/v1 events cohabit
// (AddCohabitatingResources in pkg/kubeapiserver/default_storage_factory_builder.go):
// both are stored as core Events under /registry/events/ and each API
// version converts on the way in and out (Convert_v1_Event_To_core_Event in
// pkg/apis/events/v1/conversion.go: regarding is involvedObject, note is
// message, deprecatedSource is source, ...), so an Event written through
// one is read through the other. This server has no conversion between
// versions, so events.k8s.io/v1 Events are a collection of their own,
// under /registry/events.k8s.io/events/: an Event written through one API
// is not seen through the other. kube-controller-manager's controllers
// record core/v1 Events (record.NewBroadcaster), which is what kubectl
// describe reads.
//
// Their field selectors are the core ones under their events.k8s.io names
// (AddFieldLabelConversionsForEvent).
func eventsV1() *Resource {
	return &Resource{
		Group: "events.k8s.io", Version: "v1", Name: "events", SingularName: "event",
		Kind: "Event", ListKind: "EventList", ShortNames: []string{"ev"},
		Namespaced: true, Verbs: AllVerbs,
		ValidateName:  validateDNS1123Subdomain,
		StoragePrefix: "/registry/events.k8s.io/events/",
		OwnColumns:    eventColumnsOf(eventsV1Fields),
		// Not cached either (DefaultWatchCacheSizes).
		NotWatchCached: true,
	}
}
