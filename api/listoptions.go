package api

import (
	"net/url"
	"strconv"
)

// Values of ListOptions.ResourceVersionMatch.
const (
	// ResourceVersionMatchNotOlderThan: any state at or after ResourceVersion
	// (may be served from the watch cache).
	ResourceVersionMatchNotOlderThan = "NotOlderThan"
	// ResourceVersionMatchExact: the state at exactly ResourceVersion
	// (410 if that revision was compacted).
	ResourceVersionMatchExact = "Exact"
)

// ListOptions is the query of a list or watch request, as in meta/v1
// ListOptions. The zero value lists everything with a consistent read.
type ListOptions struct {
	LabelSelector string
	FieldSelector string
	// Watch turns the list into a watch (?watch=true).
	Watch bool
	// AllowWatchBookmarks asks the server for BOOKMARK events.
	AllowWatchBookmarks bool
	// ResourceVersion: "" means the latest state (a consistent read), "0"
	// means any state the server has (usually its cache), "N" means at or
	// after revision N (see ResourceVersionMatch).
	ResourceVersion      string
	ResourceVersionMatch string
	// TimeoutSeconds bounds a watch; nil lets the server pick (30-60 min).
	TimeoutSeconds *int64
	// Limit is the page size of a list; 0 means no paging.
	Limit    int64
	Continue string
	// SendInitialEvents asks a watch to start with synthetic ADDED events
	// for the current state, ended by a BOOKMARK annotated
	// InitialEventsEndAnnotation.
	SendInitialEvents *bool
}

// Values encodes the options as query parameters, leaving out zero values.
func (o ListOptions) Values() url.Values {
	v := url.Values{}
	if o.LabelSelector != "" {
		v.Set("labelSelector", o.LabelSelector)
	}
	if o.FieldSelector != "" {
		v.Set("fieldSelector", o.FieldSelector)
	}
	if o.Watch {
		v.Set("watch", "true")
	}
	if o.AllowWatchBookmarks {
		v.Set("allowWatchBookmarks", "true")
	}
	if o.ResourceVersion != "" {
		v.Set("resourceVersion", o.ResourceVersion)
	}
	if o.ResourceVersionMatch != "" {
		v.Set("resourceVersionMatch", o.ResourceVersionMatch)
	}
	if o.TimeoutSeconds != nil {
		v.Set("timeoutSeconds", strconv.FormatInt(*o.TimeoutSeconds, 10))
	}
	if o.Limit > 0 {
		v.Set("limit", strconv.FormatInt(o.Limit, 10))
	}
	if o.Continue != "" {
		v.Set("continue", o.Continue)
	}
	if o.SendInitialEvents != nil {
		v.Set("sendInitialEvents", strconv.FormatBool(*o.SendInitialEvents))
	}
	return v
}
