package registry

import (
	"encoding/json"
	"math/big"
	"regexp"
)

// A Pod's quality-of-service class, as ComputePodQOS computes it
// (pkg/apis/core/helper/qos/qos.go), from the requests and limits of cpu
// and memory: Guaranteed when every container requests exactly its
// limits, BestEffort when none asks for anything, Burstable otherwise.
// Pod-level resources (spec.resources), when set, decide instead.

// podQOS is the QoS class of a pod's spec.
func podQOS(spec members) string {
	if r, err := spec.object("resources"); err == nil && (hasEntries(r, "requests") || hasEntries(r, "limits")) {
		return requirementsQOS(r)
	}
	class := ""
	for _, list := range []string{"initContainers", "containers"} {
		for _, raw := range spec.array(list) {
			c, err := parseMembers(raw)
			if err != nil {
				continue
			}
			r, _ := c.object("resources")
			switch q := requirementsQOS(r); {
			case q == "Burstable":
				return q
			case class == "":
				class = q
			case class != q:
				return "Burstable" // one BestEffort, one Guaranteed
			}
		}
	}
	if class == "" {
		return "BestEffort"
	}
	return class
}

func hasEntries(r members, name string) bool {
	m, err := r.object(name)
	return err == nil && len(m) > 0
}

// requirementsQOS is the class of one container's resources.
func requirementsQOS(r members) string {
	if !hasEntries(r, "requests") && !hasEntries(r, "limits") {
		return "BestEffort"
	}
	requests, _ := r.object("requests")
	limits, _ := r.object("limits")
	class := ""
	for _, name := range []string{"cpu", "memory"} {
		req, lim := quantityOf(requests.get(name)), quantityOf(limits.get(name))
		q := "Guaranteed"
		switch {
		case req.Cmp(lim) != 0:
			return "Burstable"
		case req.Sign() == 0:
			q = "BestEffort"
		}
		if class != "" && class != q {
			return "Burstable" // one of cpu and memory set, the other not
		}
		class = q
	}
	return class
}

// quantityRE is a resource.Quantity: a signed decimal number, then a
// binary suffix (Ki … Ei), a decimal one (n u m k M G T P E) or an
// exponent (pkg/api/resource/quantity.go, ParseQuantity).
var quantityRE = regexp.MustCompile(`^([+-]?[0-9]*\.?[0-9]*)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$`)

var quantitySuffixes = map[string]string{
	"Ki": "1024", "Mi": "1048576", "Gi": "1073741824", "Ti": "1099511627776",
	"Pi": "1125899906842624", "Ei": "1152921504606846976",
	"n": "1/1000000000", "u": "1/1000000", "m": "1/1000", "": "1",
	"k": "1000", "M": "1000000", "G": "1000000000", "T": "1000000000000",
	"P": "1000000000000000", "E": "1000000000000000000",
}

// quantityOf is a JSON quantity (a string, or a bare number) as an exact
// number; absent or unreadable, zero.
func quantityOf(raw json.RawMessage) *big.Rat {
	zero := new(big.Rat)
	var s string
	if json.Unmarshal(raw, &s) != nil {
		s = string(raw) // a bare number
	}
	m := quantityRE.FindStringSubmatch(s)
	if m == nil || m[1] == "" || m[1] == "." {
		return zero
	}
	n, ok := new(big.Rat).SetString(m[1])
	if !ok {
		return zero
	}
	if f, ok := quantitySuffixes[m[2]]; ok {
		scale, _ := new(big.Rat).SetString(f)
		return n.Mul(n, scale)
	}
	exp, ok := new(big.Rat).SetString("1" + m[2]) // "1e3"
	if !ok {
		return zero
	}
	return n.Mul(n, exp)
}
