// Package cache keeps a cluster as resfit scores it, as kube-scheduler's
// cache keeps it, and is named as kube-scheduler names it: a Cache takes
// node and pod events as an informer delivers them, assumes a pod on the
// node a scheduler chose (Assume) and forgets it (Forget); a snapshot is
// a copy that does not change.
//
// What it keeps is a resource.Table with a row per node (allocatable;
// used, the plain requests of the pods that count on it, with the "pods"
// slot their number; non-zero used, as NodeInfo's NonZeroRequested
// counts it) and a device view of the device resource with each node's
// GPU model, both written by kubebridge's rules (kubebridge.RowWriter,
// kubebridge.ReadDevices), DRA's devices and claims among them when a
// dra.Reading is given (Options.DRA, SetDRA).
//
// # Objects and rows
//
// A Cache holds two sides. The objects (events.go, assume.go) are what the
// events said: the nodes and pods, the pods that count on each node, what
// each node says of its devices, and the resource names they bring. The
// dense side (rows.go) is what they come to as resfit scores them: the
// schema, the table, the device view and the writer that puts a node into
// its row. An event changes the objects first and then only the
// rows it touches; a resource name the schema lacks builds the dense side
// again (SchemaChanges counts these: a pipeline built for the old schema
// must be rebuilt).
package cache
