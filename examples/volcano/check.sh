#!/usr/bin/env bash
# Builds resfit's Volcano plugins (plugin.go, build tag volcano) and the
# vc-scheduler that carries them (cmd/vc-scheduler) against a Volcano source
# tree, and runs the plugins' tests inside Volcano's own session test
# helpers. Volcano is not on the Go module proxy, so this needs a checkout:
#
#   VOLCANO_SRC=/path/to/volcano ./check.sh
#   VOLCANO_SRC=/path/to/volcano VC_SCHEDULER_OUT=/tmp/vc-scheduler ./check.sh   # keep the binary
#   VOLCANO_SRC=/path/to/volcano ./check.sh bench [go test flags]   # the session benchmark instead
#   VOLCANO_SRC=/path/to/volcano ./check.sh build OUT   # only resfit's vc-scheduler, written to OUT
#   VOLCANO_SRC=/path/to/volcano ./check.sh compile   # compiles what the check compiles; runs nothing
#   VOLCANO_SRC=/path/to/volcano ./check.sh plugin   # Volcano's own scheduler with resfit.so, end to end
#   VOLCANO_SRC=/path/to/volcano ./check.sh race   # the plugins' tests under the race detector
#
# (.ci/run runs compile in the background, at the lowest priority, while
# the other modules test, so that the check after them finds Volcano and
# Kubernetes compiled.)
#
# Everything the check builds is static (CGO_ENABLED=0), as the README's
# vc-scheduler and the image are: Volcano and its Kubernetes (v1.36, which
# Volcano pins, apart from resfit's v1.37) compile once. The plugins'
# tests under the race detector (race) are a build of them both of their
# own, 12 minutes of CPU from an empty cache (6 on 2 cores): CI runs the
# Volcano-free parts of this module under the race detector with the
# others (.ci/test), and this mode where the session's concurrent code
# (session.go, answers.go: Volcano calls the plugins on several
# goroutines) changes.
#
# It works in a temporary copy of this module; nothing is written here but
# the binary, where VC_SCHEDULER_OUT says.
set -euo pipefail
if [ -z "${VOLCANO_SRC:-}" ]; then
  echo "check.sh: set VOLCANO_SRC to a Volcano source checkout" >&2
  exit 2
fi
mode=${1:-check}
case "$mode" in
  check|compile|plugin|race) ;;
  bench) shift ;;
  build)
    if [ -z "${2:-}" ]; then
      echo "check.sh: build needs the path to write vc-scheduler to: check.sh build OUT" >&2
      exit 2
    fi
    VC_SCHEDULER_OUT=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;;
  *) echo "check.sh: unknown mode $mode (none, compile, plugin, race, bench or build OUT)" >&2; exit 2 ;;
esac
# The end-to-end test runs a real kube-apiserver on a real etcd, found on
# PATH (.ci/run builds one; examples/kubescheduler's README says how).
if { [ "$mode" = check ] || [ "$mode" = plugin ]; } && ! command -v etcd >/dev/null; then
  echo "check.sh: etcd must be on PATH for the end-to-end test: cd examples/kubescheduler && CGO_ENABLED=0 go build -trimpath -o /tmp/bin/etcd go.etcd.io/etcd/server/v3, then PATH=/tmp/bin:\$PATH" >&2
  exit 2
fi
# cgo: for the race detector and for Go plugins (resfit.so below), the
# modes race and plugin; the check builds and tests without it, static,
# as Volcano builds its released images (the image is that binary alone).
export CGO_ENABLED=0
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# (-P: Volcano's packages are compiled at the path they are read from,
# without -trimpath; a tree reached through a symbolic link, as the
# fresh-clone check reaches ../shared, would compile them once more.)
src=$(cd "$VOLCANO_SRC" && pwd -P)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here"/*.go "$here"/README.md "$here"/volcano-scheduler.conf "$here"/Dockerfile "$work"/
cp -r "$here"/cmd "$here"/e2e "$here"/manifests "$work"/
cd "$work"
cat > go.mod <<MOD
module github.com/resfit/resfit/examples/volcano

go 1.26

require (
	github.com/resfit/resfit v0.0.0
	github.com/resfit/resfit/examples/kubebridge v0.0.0
	volcano.sh/volcano v0.0.0
)

replace github.com/resfit/resfit => $root

replace github.com/resfit/resfit/examples/kubebridge => $root/examples/kubebridge

replace volcano.sh/volcano => $src
MOD
# Volcano pins its dependencies (the k8s.io staging modules among them) with
# replace directives, which apply only to the main module: copy them.
awk '/^replace \(/ {block=1; next} block && /^\)/ {block=0; next} block && NF {print} /^replace [^(]/ {sub(/^replace /, ""); print}' "$src/go.mod" |
  while read -r old arrow new version; do
    [ "$arrow" = "=>" ] || continue
    case "$new" in
      ./*|../*) go mod edit -replace="$old=$src/$new" ;;
      *) go mod edit -replace="$old=$new${version:+@$version}" ;;
    esac
  done
GOFLAGS=-mod=mod go mod tidy
# What vc-scheduler --version says: resfit's commit, and the Volcano it
# carries (the tree's commit, from git or from the snapshot's README).
resfit_commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
volcano_commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null ||
  sed -n '/.* at commit [0-9a-f]\{7,\}.*/{s/.* at commit \([0-9a-f]\{7,\}\).*/\1/p;q}' "$src/README.md" 2>/dev/null)
ldflags="-X main.resfitCommit=$resfit_commit -X volcano.sh/volcano/pkg/version.GitSHA=${volcano_commit:-unknown}"
ldflags="$ldflags -X volcano.sh/volcano/pkg/version.Version=${VOLCANO_VERSION:-source-tree} -X volcano.sh/volcano/pkg/version.Built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
if [ "$mode" = build ]; then
  CGO_ENABLED=0 go build -tags volcano -ldflags "$ldflags" -o "$VC_SCHEDULER_OUT" ./cmd/vc-scheduler
  "$VC_SCHEDULER_OUT" --version
  echo "built $VC_SCHEDULER_OUT"
  exit
fi
if [ "$mode" = bench ]; then
  # Volcano's session with each plugin alone (bench_volcano_test.go: both
  # benchmarks, unless a -bench of the caller's says otherwise).
  go test -tags volcano -run '^$' -bench . -benchmem "$@" .
  exit
fi
if [ "$mode" = race ]; then
  CGO_ENABLED=1 go test -tags volcano -count=1 -race .
  exit
fi
# vet (it compiles what it reads, the tests' files and the packages they
# import included, as the tests below compile them)
go vet -tags volcano ./...
out=${VC_SCHEDULER_OUT:-$work/vc-scheduler}
go build -tags volcano -ldflags "$ldflags" -o "$out" ./cmd/vc-scheduler
# (Not piped into grep -q: under pipefail, a grep that exits at its match
# can kill the writer with SIGPIPE, failing the check with exit 141.)
version=$("$out" --version)
case "$version" in
  *"resfit's vc-scheduler"*) ;;
  *) echo "check.sh: $out --version does not name resfit's vc-scheduler: $version" >&2; exit 1 ;;
esac
echo "built $out"
if [ "$mode" = compile ]; then
  echo "compiled the check's binaries and tests"
  exit
fi
# The end-to-end test runs a real kube-apiserver, Kubernetes v1.37.2's,
# as a process: KUBE_APISERVER when set (.ci/run builds it once for every
# suite), or else built here from examples/kubescheduler's module, static,
# as .ci/run and the images build (a server of Volcano's Kubernetes, v1.36,
# would be a build of its own).
if [ -z "${KUBE_APISERVER:-}" ]; then
  KUBE_APISERVER=$work/kube-apiserver
  (cd "$root/examples/kubescheduler" && CGO_ENABLED=0 go build -trimpath -o "$KUBE_APISERVER" k8s.io/kubernetes/cmd/kube-apiserver)
fi
export KUBE_APISERVER VC_SCHEDULER=$out
log="$work/test.log"
if [ "$mode" = plugin ]; then
  # Volcano's own scheduler command, and resfit's plugins as a Go plugin it
  # loads from its plugin directory (--plugins-dir): both from this module,
  # with cgo, by the same Go release, as Go's plugins require. Each is a
  # build of Volcano and Kubernetes in a mode of its own (with cgo; as a
  # plugin) that the check needs for nothing else: CI does not run this.
  # (-mod=mod: its own imports, beyond resfit's, into go.sum)
  CGO_ENABLED=1 go build -mod=mod -o "$work/vc-scheduler-volcano" volcano.sh/volcano/cmd/scheduler
  CGO_ENABLED=1 go build -tags volcano -buildmode=plugin -o "$work/resfit.so" ./cmd/resfit-plugin
  echo "built $work/resfit.so"
  export VC_SCHEDULER_VOLCANO=$work/vc-scheduler-volcano RESFIT_PLUGIN=$work/resfit.so
  if ! go test -tags volcano -count=1 -v -run '^TestVCSchedulerBindsWithResfit$' ./e2e >"$log" 2>&1; then
    grep -E '^(=== RUN|--- |PASS|FAIL|ok)|_test\.go:[0-9]+:' "$log" | grep -v '^=== RUN' || true
    echo "check.sh: the end-to-end test failed; the last lines of its output:" >&2
    tail -n 200 "$log" >&2
    exit 1
  fi
  grep -E '^(\s*--- |PASS|FAIL|ok)' "$log" || true
  exit
fi
# The tests, each once, the plugins' and then the end-to-end test (which
# starts a cluster): their names and results shown, the whole output kept
# for a failure.
if ! { go test -tags volcano -count=1 -v . && go test -tags volcano -count=1 -v ./e2e; } >"$log" 2>&1; then
  grep -E '^(=== RUN|--- |PASS|FAIL|ok)|_test\.go:[0-9]+:' "$log" | grep -v '^=== RUN' || true
  echo "check.sh: tests failed; the last lines of their output:" >&2
  tail -n 200 "$log" >&2
  exit 1
fi
grep -E '^(\s*--- |PASS|FAIL|ok|\s+plugin)' "$log" || true
