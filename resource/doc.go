// Package resource names resources, parses Kubernetes quantities into exact
// integer amounts, and lays amounts out as dense vectors.
//
// A Schema resolves resource names to slots once; a Vector holds one amount
// per slot; a Table holds many nodes' allocatable and used vectors in two
// row-major matrices. Everything after that — filters and scorers — works on
// slots and never looks up a name.
//
// What every host of resfit shares when it reads its own objects is here
// too (host.go): the schema a cluster's resource names make (SchemaOf),
// amounts as hosts report them in canonical units and held to range
// (Clamp, ClampFloat, FromWhole), a pod's requests by every rule
// (RequestsOf) and what it asks of individual devices (DeviceRequestOf).
//
// Devices is a device-level view of one resource: each node's devices and
// how much of each is free, and, for a device that divides into
// partitions (a GPU with MIG), its Layout and the counters it has left,
// which say exactly which partitions still fit.
//
// Amounts are int64 in a canonical unit per resource (see UnitOf): cpu in
// millicores, extended resources such as nvidia.com/gpu in milli-units
// ("1.5" is 1500), memory and other native resources in bytes or counts
// ("4Gi" is 4294967296). Every amount lies in [0, MaxAmount].
package resource
