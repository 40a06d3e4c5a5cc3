package kubebridge

import (
	"fmt"
	"io"
	"os"
)

// The most a host reads of one file: a configuration (a ConfigMap holds at
// most 1 MiB in the API; a file may hold several documents beside it), a
// pod manifest file, and a cluster snapshot (a cluster of 5,000 nodes and
// 20,000 pods lists in about 150 MB of JSON).
const (
	MaxConfigBytes   = 8 << 20
	MaxPodFileBytes  = 64 << 20
	MaxSnapshotBytes = 1 << 30
)

// ReadFile reads a file of at most limit bytes; a larger one, or one that
// never ends (/dev/zero), is an error naming the file and the limit,
// read no further than one byte past the limit.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := LimitedReader(path, f, limit)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// Limited is LimitedReader's reader.
type Limited struct {
	path        string
	r           io.Reader
	limit, read int64
}

// Exceeded is the error of a read past the limit, nil before one: a
// decoder over the reader may wrap it in its own words.
func (l *Limited) Exceeded() error {
	if l.read > l.limit {
		return tooLarge(l.path, l.limit)
	}
	return nil
}

func (l *Limited) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.read += int64(n)
	if err := l.Exceeded(); err != nil {
		return 0, err
	}
	return n, err
}

// LimitedReader reads r, a file named path, up to limit bytes; a read past
// it fails with an error naming the file and the limit. When r is a file
// whose size is known to be larger, the error comes at once.
func LimitedReader(path string, r io.Reader, limit int64) (*Limited, error) {
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
			return nil, tooLarge(path, limit)
		}
	}
	return &Limited{path: path, r: io.LimitReader(r, limit+1), limit: limit}, nil
}

func tooLarge(path string, limit int64) error {
	return fmt.Errorf("%s: larger than %d MiB, the most read of such a file", path, limit>>20)
}
