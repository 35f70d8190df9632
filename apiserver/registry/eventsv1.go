package registry

// eventsV1 is events.k8s.io/v1 Events: the newer shape of an Event
// (regarding, note, reportingController, series) that kube-scheduler and
// client-go's tools/events write.
//
// They are the core Events under other names: kube-apiserver keeps one
// collection of Events, and events.k8s.io/v1 Events cohabit with core/v1
// ones (AddCohabitatingResources in
// pkg/kubeapiserver/default_storage_factory_builder.go). Both are stored
// as core Events under /registry/events/, and each API version converts on
// the way in and out (eventconversion.go: regarding is involvedObject,
// note is message, deprecatedSource is source, ...), so an Event written
// through one is read through the other (kinds-eventsv1-list.json,
// kinds-eventsv1-list-as-core.json). kube-controller-manager's controllers
// record core/v1 Events (record.NewBroadcaster), kube-scheduler
// events.k8s.io ones; kubectl describe and kubectl events read core/v1.
//
// Their field selectors are the core ones under their events.k8s.io names
// (AddFieldLabelConversionsForEvent).
func eventsV1() *Resource {
	return &Resource{
		Group: "events.k8s.io", Version: "v1", Name: "events", SingularName: "event",
		Kind: "Event", ListKind: "EventList", ShortNames: []string{"ev"},
		Namespaced: true, Verbs: AllVerbs,
		ValidateName:  validateDNS1123Subdomain,
		StoragePrefix: "/registry/events/",
		StoredAs:      eventStoredAsCore,
		OwnColumns:    eventColumnsOf(eventsV1Fields),
		// Not cached either (DefaultWatchCacheSizes), nor garbage
		// collected: the same storage and strategy as core Events.
		NotWatchCached:      true,
		NoGarbageCollection: true,
	}
}
