package resource

import (
	"fmt"
	"strings"
)

// Well-known resource names.
const (
	CPU              = "cpu"
	Memory           = "memory"
	EphemeralStorage = "ephemeral-storage"
	Pods             = "pods"
	// GPU is NVIDIA's device plugin's resource, the device resource a
	// device view is of unless told otherwise.
	GPU = "nvidia.com/gpu"
)

// Unit is the canonical unit an amount of a resource is counted in.
type Unit uint8

const (
	// Whole counts whole units: bytes for memory, ephemeral-storage and
	// hugepages-*, a count for pods and other native resources.
	Whole Unit = iota
	// Milli counts thousandths: millicores for cpu, milli-units for extended
	// resources (1.5 GPUs is 1500), as Volcano counts them.
	Milli
)

func (u Unit) scale() int {
	if u == Milli {
		return -3
	}
	return 0
}

func (u Unit) String() string {
	if u == Milli {
		return "milli-units"
	}
	return "whole units"
}

// UnitOf returns the canonical unit of the named resource: Milli for cpu and
// for extended resources (a domain-prefixed name outside kubernetes.io, such
// as nvidia.com/gpu), Whole for everything else.
//
// Kubernetes counts extended resources in whole units and requires them to be
// integers; counting them in milli-units instead changes no score, because
// every upstream formula divides one amount of a resource by another amount
// of the same resource, and lets fractional GPU requests ("0.5") be exact.
func UnitOf(name string) Unit {
	if name == CPU || IsExtended(name) {
		return Milli
	}
	return Whole
}

// IsExtended reports whether name is an extended resource: it has a domain
// prefix that is not kubernetes.io, and does not start with "requests.".
func IsExtended(name string) bool {
	if !strings.Contains(name, "/") || isPrefixedNative(name) {
		return false
	}
	return !strings.HasPrefix(name, "requests.")
}

func isPrefixedNative(name string) bool {
	return strings.Contains(name, "kubernetes.io/")
}

// IsScalar reports whether kube-scheduler treats name as a scalar resource:
// an extended resource, hugepages-*, attachable-volumes-* or a
// kubernetes.io/-prefixed native resource. kube-scheduler's NodeResourcesFit
// scoring skips a scalar resource the pod does not request.
func IsScalar(name string) bool {
	return IsExtended(name) || strings.HasPrefix(name, "hugepages-") ||
		strings.HasPrefix(name, "attachable-volumes-") || isPrefixedNative(name)
}

// ValidateName checks that name is a Kubernetes qualified name: an optional
// DNS subdomain prefix and a slash, then a name of at most 63 characters made
// of alphanumerics, '-', '_' and '.', starting and ending alphanumeric.
func ValidateName(name string) error {
	local := name
	if prefix, rest, hasPrefix := strings.Cut(name, "/"); hasPrefix {
		local = rest
		if err := validateSubdomain(prefix); err != nil {
			return fmt.Errorf("resource name %q: prefix %s", name, err)
		}
	}
	if err := validateLocalName(local); err != nil {
		return fmt.Errorf("resource name %q: %s", name, err)
	}
	return nil
}

func validateLocalName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("name part must not be empty")
	case len(s) > 63:
		return fmt.Errorf("name part must be at most 63 characters, got %d", len(s))
	case !isAlnum(s[0]) || !isAlnum(s[len(s)-1]):
		return fmt.Errorf("name part must start and end with a letter or digit")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return fmt.Errorf("name part has %q; allowed are letters, digits, '-', '_' and '.'", c)
		}
	}
	return nil
}

func validateSubdomain(s string) error {
	if s == "" || len(s) > 253 {
		return fmt.Errorf("must be a DNS subdomain of 1 to 253 characters")
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("%q must be dot-separated labels of 1 to 63 characters", s)
		}
		if !isLowerAlnum(label[0]) || !isLowerAlnum(label[len(label)-1]) {
			return fmt.Errorf("%q: labels must start and end with a lower-case letter or digit", s)
		}
		for i := 0; i < len(label); i++ {
			if !isLowerAlnum(label[i]) && label[i] != '-' {
				return fmt.Errorf("%q: labels may hold only lower-case letters, digits and '-'", s)
			}
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return isLowerAlnum(c) || (c >= 'A' && c <= 'Z')
}

func isLowerAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || isDigit(c)
}
