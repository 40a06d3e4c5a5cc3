package main

import (
	"strings"
	"testing"
)

func TestParseAndSummarize(t *testing.T) {
	out := `goos: linux
BenchmarkCompare/kube/MostAllocated/resources=3/nodes=1000-2   	    5852	    205101 ns/op	       205.1 ns/node	   79992 B/op	    3030 allocs/op
BenchmarkCompare/kube/MostAllocated/resources=3/nodes=1000-2   	    5852	    195101 ns/op	       195.1 ns/node	   79992 B/op	    3030 allocs/op
BenchmarkCompare/kube/MostAllocated/resources=3/nodes=1000-2   	    5852	    225101 ns/op	       225.1 ns/node	   79992 B/op	    3030 allocs/op
BenchmarkCompare/resfit/MostAllocated/resources=3/nodes=1000-2 	  155205	      7718 ns/op	         7.718 ns/node	       0 B/op	       0 allocs/op
PASS
`
	got := parse(strings.NewReader(out))
	k := got["BenchmarkCompare/kube/MostAllocated/resources=3/nodes=1000"]
	if len(k) != 3 || k[0].nsPerNode != 205.1 || k[0].allocsPerOp != 3030 {
		t.Fatalf("parsed %+v", got)
	}
	s := summarize(figures(k, nsNode))
	if s.median != 205.1 || s.spread < 0.146 || s.spread > 0.147 {
		t.Errorf("summary %+v, want median 205.1, spread 30/205.1", s)
	}
	if n := nodesOf("MostAllocated/resources=3/nodes=1000"); n != 1000 {
		t.Errorf("nodes %v", n)
	}
}
