package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunSynthetic(t *testing.T) {
	dir := t.TempDir()
	var out, log bytes.Buffer
	if err := run([]string{"-synthetic", "-seeds", "2", "-policies", "Random,FGD,ResfitFrag", "-out", dir}, &out, &log); err != nil {
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
	if err := run([]string{"-synthetic", "-policies", "Tetris"}, &out, &log); err == nil {
		t.Error("an unknown policy ran")
	}
	for _, bad := range [][]string{{"-seeds", "0"}, {"-load", "NaN"}, {"-load", "-1"}} {
		if err := run(append([]string{"-synthetic"}, bad...), &out, &log); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: %v", bad, err)
		}
	}
	if err := run([]string{"-synthetic", "-tiebreak", "coin"}, &out, &log); err == nil || !strings.Contains(err.Error(), "tie-break") {
		t.Errorf("bad tie-break: %v", err)
	}
}
