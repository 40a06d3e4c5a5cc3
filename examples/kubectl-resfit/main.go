// Command kubectl-resfit is a kubectl plugin (kubectl runs it as `kubectl
// resfit` when it is on PATH) that answers "why did my pod land there, and
// what would this configuration do on my cluster?" on a live cluster
// (read-only, through your kubeconfig) or a snapshot file:
//
//	kubectl resfit validate --config FILE
//	kubectl resfit explain  --config FILE [--snapshot FILE] (POD | -f POD.yaml) [--top N] [-o table|json]
//	kubectl resfit whatif   --config A.yaml [--config B.yaml ...] [--snapshot FILE] [-f PODS.yaml] [-o table|json]
//	kubectl resfit defrag   --config FILE [--snapshot FILE] [--for POD | --for podgroup/NAME] [--max-moves N] [-o table|json]
//
// defrag plans moves; it evicts nothing.
// A snapshot is `kubectl get nodes,pods -A -o json > cluster.json` (with
// `resourceslices.resource.k8s.io,resourceclaims.resource.k8s.io,
// resourceclaimtemplates.resource.k8s.io,deviceclasses.resource.k8s.io`
// after pods for a cluster with DRA devices, and poddisruptionbudgets for
// defrag). Exit
// status: 0 done, 1 bad input (a configuration, snapshot or pod that does
// not load; every problem is printed), 2 a usage error.
package main

import (
	"context"
	"os"

	"github.com/resfit/resfit/examples/kubectl-resfit/command"
)

func main() {
	os.Exit(command.Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
