package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestRunSynthetic(t *testing.T) {
	dir := t.TempDir()
	var out, log bytes.Buffer
	if err := execute([]string{"-synthetic", "-seeds", "2", "-policies", "Random,FGD,ResfitFrag", "-out", dir}, &out, &log); err != nil {
		t.Fatal(err, log.String())
	}
	for _, want := range []string{"| Random |", "| FGD |", "| ResfitFrag |", "mean ± sd over 2 seeds"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(log.String(), "[  6/6]") {
		t.Errorf("no progress lines:\n%s", log.String())
	}
	f, err := os.Open(filepath.Join(dir, "replay.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 1+3*2*131 {
		t.Fatalf("replay.csv: %d rows, %v", len(rows), err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "allocation.svg"))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("ResfitFrag")) {
		t.Fatalf("allocation.svg: %v", err)
	}
	if err := execute([]string{"-synthetic", "-policies", "Tetris"}, &out, &log); err == nil {
		t.Error("an unknown policy ran")
	}
	for _, bad := range [][]string{{"-seeds", "0"}, {"-load", "NaN"}, {"-load", "-1"}} {
		if err := execute(append([]string{"-synthetic"}, bad...), &out, &log); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: %v", bad, err)
		}
	}
	if err := execute([]string{"-synthetic", "-tiebreak", "coin"}, &out, &log); err == nil || !strings.Contains(err.Error(), "tie-break") {
		t.Errorf("bad tie-break: %v", err)
	}
	// -h is asked for, not an error: the usage, and exit 0.
	log.Reset()
	if err := execute([]string{"-h"}, &out, &log); err != nil || !strings.Contains(log.String(), "Usage of replay:") || !strings.Contains(log.String(), "-lifetime-weight") {
		t.Errorf("-h: %v\n%s", err, log.String())
	}
}

// A trace directory or pod list that is not there is an error naming the
// file, never a silent switch to the synthetic workload; -pods reads a
// pod list beside the trace's node list, gpu_spec included.
func TestTraceFiles(t *testing.T) {
	dir := t.TempDir()
	nodes := "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,131072,2,V100M32\nn1,32000,131072,2,P100\n"
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np0,4000,8192,1,1000,V100M32|V100M16\np1,4000,8192,1,500,\n"
	os.WriteFile(filepath.Join(dir, "openb_node_list_gpu_node.csv"), []byte(nodes), 0o644)
	os.WriteFile(filepath.Join(dir, "mine.csv"), []byte(pods), 0o644)
	var out, log bytes.Buffer
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-trace", filepath.Join(dir, "nowhere")}, "node list: open " + filepath.Join(dir, "nowhere", "openb_node_list_gpu_node.csv")},
		{[]string{"-trace", dir}, "pod list: open " + filepath.Join(dir, "openb_pod_list_default.csv")},
		{[]string{"-trace", dir, "-pods", "other.csv"}, "pod list: open " + filepath.Join(dir, "other.csv")},
		{[]string{"-synthetic", "-trace", dir}, "-synthetic replays the built-in workload"},
	} {
		if err := execute(append(c.args, "-out", ""), &out, &log); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	out.Reset()
	if err := execute([]string{"-trace", dir, "-pods", "mine.csv", "-seeds", "1", "-policies", "BestFit", "-out", ""}, &out, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "openb ("+dir+", mine.csv): 2 nodes") {
		t.Errorf("output:\n%s", out.String())
	}
}

// -defrag runs the passes after the arrivals for one policy: the table,
// defrag.csv (a row per pass and seed) and defrag.svg.
func TestRunDefragSynthetic(t *testing.T) {
	skipUnderRace(t)
	dir := t.TempDir()
	var out, log bytes.Buffer
	if err := execute([]string{"-synthetic", "-defrag", "-seeds", "1", "-out", dir}, &out, &log); err != nil {
		t.Fatal(err, log.String())
	}
	for _, want := range []string{"ResfitFrag placing", "| make-room k=2 |", "| reclaim 1% |", "| give-back 5% |", "| fragMultiPod 0.5% |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	f, err := os.Open(filepath.Join(dir, "defrag.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 1+16 {
		t.Fatalf("defrag.csv: %d rows, %v", len(rows), err)
	}
	if svg, err := os.ReadFile(filepath.Join(dir, "defrag.svg")); err != nil || !bytes.Contains(svg, []byte("fragMultiPod")) {
		t.Fatalf("defrag.svg: %v", err)
	}
	if err := execute([]string{"-synthetic", "-defrag", "-policies", "FGD,Random"}, &out, &log); err == nil || !strings.Contains(err.Error(), "one policy") {
		t.Errorf("two policies: %v", err)
	}
}

// -churn on the synthetic workload: the tables, a row per replay in
// churn.csv, a plot per load, and errors for bad flags.
func TestRunChurnSynthetic(t *testing.T) {
	skipUnderRace(t)
	dir := t.TempDir()
	var out, log bytes.Buffer
	args := []string{"-churn", "-synthetic", "-seeds", "2", "-policies", "FGD,ResfitFrag", "-loads", "0.9,1.3",
		"-moves", "none,give-back", "-declare", "none,learned", "-warmup", "1h", "-window", "3h", "-out", dir}
	if err := execute(args, &out, &log); err != nil {
		t.Fatal(err, log.String())
	}
	for _, want := range []string{"| FGD | none | 0.9 |", "| ResfitFrag | give-back 1%/h every 10m | 1.3 |", "| ResfitFrag | none, ends learned | 0.9 |",
		"idle GPU % while GPU pods wait", "empty 8-GPU nodes %", "8 GPUs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	f, err := os.Open(filepath.Join(dir, "churn.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 1+2*2*2*2*2 {
		t.Fatalf("churn.csv: %d rows, %v", len(rows), err)
	}
	// Each row of the table is the mean of its replays in churn.csv: the
	// idle GPU while GPU pods wait, to the digit printed.
	col := slices.Index(rows[0], "idle_while_waiting_pct")
	sums := map[string]float64{}
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[col], 64)
		if err != nil {
			t.Fatal(err)
		}
		load, _ := strconv.ParseFloat(r[2], 64)
		sums[fmt.Sprintf("| %s | %s | %v | **", r[0], r[1], load)] += v / 2
	}
	// Over two seeds the table gives the means alone, and says so.
	if !strings.Contains(out.String(), "(Means over 2 seeds: ± is printed from 3 seeds on.)") {
		t.Errorf("the table does not say it gives no interval over 2 seeds:\n%s", out.String())
	}
	for prefix, mean := range sums {
		want := prefix + fmt.Sprintf("%.2f** |", mean)
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table has no row %q:\n%s", want, out.String())
		}
	}
	for _, load := range []string{"0.9", "1.3"} {
		svg, err := os.ReadFile(filepath.Join(dir, "churn-load-"+load+".svg"))
		if err != nil || !bytes.Contains(svg, []byte("ResfitFrag, give-back")) {
			t.Errorf("churn-load-%s.svg: %v", load, err)
		}
	}
	for _, bad := range [][]string{{"-loads", "x"}, {"-loads", "0"}, {"-moves", "shuffle"}, {"-moves", "make-room", "-k", "0"}, {"-window", "0s"},
		{"-declare", "guessed"}, {"-declare", "noisy", "-sigma", "-1"}} {
		if err := execute(append([]string{"-churn", "-synthetic"}, bad...), &out, &log); err == nil {
			t.Errorf("%v ran", bad)
		}
	}
}

// skipUnderRace skips a test that runs many replays on one goroutine,
// where the race detector has nothing to find and takes minutes (137 s
// and 70 s for the two that call it, against about a tenth of that
// without it): .ci/run runs them without it.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("many replays on one goroutine: run without -race (.ci/run does)")
	}
}

// The README names every flag the command takes, and every flag it names
// is one (a -name in a `go run .` line or in backquotes).
func TestREADMENamesEveryFlag(t *testing.T) {
	text, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(text)
	var usage bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatal(err)
	}
	known := map[string]bool{"h": true}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z][a-z-]*)`).FindAllStringSubmatch(usage.String(), -1) {
		known[m[1]] = true
		if !regexp.MustCompile(`[\s(` + "`" + `]-` + regexp.QuoteMeta(m[1]) + `\b`).MatchString(readme) {
			t.Errorf("-%s is not in the README", m[1])
		}
	}
	if len(known) < 20 {
		t.Fatalf("the usage lists %d flags:\n%s", len(known), usage.String())
	}
	for _, line := range strings.Split(readme, "\n") {
		if !strings.HasPrefix(line, "go run . ") {
			continue
		}
		cmd, _, _ := strings.Cut(line, "#")
		for _, m := range regexp.MustCompile(`\s-([a-z][a-z-]*)`).FindAllStringSubmatch(cmd, -1) {
			if !known[m[1]] {
				t.Errorf("%q: -%s is no flag of the replay", strings.TrimSpace(cmd), m[1])
			}
		}
	}
}
