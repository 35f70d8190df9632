package registry

import (
	"strings"

	"listwatch/api"
)

// validateLease is ValidateLeaseSpec (pkg/apis/coordination/validation):
// a lease lasts more than 0 seconds and has not changed hands a negative
// number of times; a preferred holder needs a strategy, and a strategy is
// OldestEmulationVersion or a qualified name with a prefix.
func validateLease(obj *api.Object) []api.StatusCause {
	var spec struct {
		LeaseDurationSeconds *int64  `json:"leaseDurationSeconds"`
		LeaseTransitions     *int64  `json:"leaseTransitions"`
		Strategy             *string `json:"strategy"`
		PreferredHolder      *string `json:"preferredHolder"`
	}
	field(obj, &spec, "spec")
	var causes []api.StatusCause
	if d := spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		causes = append(causes, api.FieldInvalid("spec.leaseDurationSeconds", *d, "must be greater than 0"))
	}
	if n := spec.LeaseTransitions; n != nil && *n < 0 {
		causes = append(causes, api.FieldInvalid("spec.leaseTransitions", *n, "must be greater than or equal to 0"))
	}
	if s := spec.Strategy; s != nil {
		causes = append(causes, leaseStrategyCauses(*s)...)
	}
	if p := spec.PreferredHolder; p != nil && *p != "" && (spec.Strategy == nil || *spec.Strategy == "") {
		causes = append(causes, api.FieldForbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
	}
	return causes
}

// leaseStrategyOldestEmulationVersion is coordination/v1's only
// CoordinatedLeaseStrategy.
const leaseStrategyOldestEmulationVersion = "OldestEmulationVersion"

// leaseStrategyCauses is ValidateCoordinatedLeaseStrategy. It is called
// with the path of spec.strategy and adds "strategy" once more, so the
// real server names the field spec.strategy.strategy; so do we.
func leaseStrategyCauses(s string) []api.StatusCause {
	const fld = "spec.strategy.strategy"
	if !strings.Contains(s, "/") {
		if s != leaseStrategyOldestEmulationVersion {
			return []api.StatusCause{api.FieldNotSupported(fld, s, []string{leaseStrategyOldestEmulationVersion})}
		}
		return nil
	}
	var causes []api.StatusCause
	for _, msg := range api.IsQualifiedName(s) {
		causes = append(causes, api.FieldInvalid(fld, s, msg))
	}
	return causes
}
