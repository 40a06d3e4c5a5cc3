// Package helm holds resfit's Helm chart (resfit/: resfit's kube-scheduler
// as a second scheduler and its descheduler, the rooms CRD, their RBAC) and
// its tests: the chart rendered with Helm's own engine and linted with
// Helm's own linter, every setting loaded in resfit's reader, and the
// hosts' raw manifests held to the chart's rendering byte for byte.
package helm
