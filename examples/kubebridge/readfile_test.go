package kubebridge

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// A file within the limit is read whole; one past it, a stream that never
// ends (/dev/zero) and a reader past it are errors naming the file and the
// limit, without reading much past it.
func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("12345678"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(path, 8); err != nil || string(data) != "12345678" {
		t.Errorf("8 bytes, limit 8: %q, %v", data, err)
	}
	want := "larger than 0 MiB, the most read of such a file"
	if _, err := ReadFile(path, 7); err == nil || err.Error() != path+": "+want {
		t.Errorf("8 bytes, limit 7: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		// Refused at its first byte, under a snapshot's cap of 1 GiB.
		alloc := allocated(func() {
			if _, err := ReadFile("/dev/zero", MaxSnapshotBytes); err == nil || err.Error() != "/dev/zero: byte 0 is NUL: not JSON or YAML text" {
				t.Errorf("/dev/zero: %v", err)
			}
		})
		if alloc > 4<<20 {
			t.Errorf("/dev/zero: %d bytes allocated to refuse it", alloc)
		}
	}
	nul := filepath.Join(dir, "nul")
	if err := os.WriteFile(nul, []byte("{\"a\": 1\x00}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(nul, 8<<20); err == nil || err.Error() != nul+": byte 7 is NUL: not JSON or YAML text" {
		t.Errorf("a NUL byte: %v", err)
	}
	r, err := LimitedReader("stdin", strings.NewReader(strings.Repeat("x", 3<<20)), 2<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(r); err == nil || err.Error() != "stdin: larger than 2 MiB, the most read of such a file" {
		t.Errorf("3 MiB from a reader, limit 2 MiB: %v", err)
	}
}

// A stream (a pipe: its size unknown) is read whole within the limit, and
// one past it is refused having held no more than the limit and a chunk:
// io.ReadAll, which grows its buffer, allocated over twice the limit.
func TestReadFileStream(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	stream := func(text []byte) {
		go func() {
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Error(err)
				return
			}
			defer w.Close()
			_, _ = w.Write(text) // the reader may stop early
		}()
	}
	text := []byte(strings.Repeat("a: [1, 2]\n", 350_000)) // 3.5 MB: several chunks
	stream(text)
	if data, err := ReadFile(fifo, 8<<20); err != nil || !bytes.Equal(data, text) {
		t.Errorf("3.5 MB through a pipe, limit 8 MiB: %d bytes, %v", len(data), err)
	}
	const limit = 32 << 20
	stream(bytes.Repeat([]byte("x"), limit+(8<<20)))
	alloc := allocated(func() {
		if _, err := ReadFile(fifo, limit); err == nil || err.Error() != fifo+": larger than 32 MiB, the most read of such a file" {
			t.Errorf("40 MiB through a pipe, limit 32 MiB: %v", err)
		}
	})
	if alloc > limit+(2<<20) {
		t.Errorf("%d bytes allocated to refuse a stream past %d", alloc, limit)
	}
}

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
