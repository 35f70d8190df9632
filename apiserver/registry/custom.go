package registry

import "listwatch/api"

// What package crd needs to declare a custom resource from its definition:
// the registry's own building blocks, exported.

// NewColumn declares a Table column: its definition and how to compute
// its cell from an object (nil is an empty cell).
func NewColumn(name, typ, format, description string, priority int32, cell func(obj *api.Object) any) Column {
	return Column{def: tableColumn{Name: name, Type: typ, Format: format, Description: description, Priority: priority}, cell: cell}
}

// ValidateSubdomainName checks a name (or, with prefix, a generateName) as a
// DNS-1123 subdomain, the rule for custom resources' names.
func ValidateSubdomainName(name string, prefix bool) []string {
	return validateDNS1123Subdomain(name, prefix)
}
