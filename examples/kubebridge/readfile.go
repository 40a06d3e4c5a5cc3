package kubebridge

import (
	"bytes"
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
// never ends, is an error naming the file and the limit, read no further
// than one byte past the limit and held in no more memory than that (a
// file whose size is known is read into a buffer of that size; a stream,
// in chunks joined at its end). A NUL byte, which neither JSON nor YAML
// text holds, is an error at once (/dev/zero, a binary file).
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
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		buf := bytes.NewBuffer(make([]byte, 0, st.Size()+bytes.MinRead))
		_, err := buf.ReadFrom(r)
		return buf.Bytes(), err
	}
	return readChunks(r)
}

// readChunks reads r to its end in chunks, which it joins: a stream
// refused at its limit has held no more than the limit (io.ReadAll's
// growing buffer holds up to twice what it read, in the garbage of the
// buffers it outgrew).
func readChunks(r io.Reader) ([]byte, error) {
	var chunks [][]byte
	for {
		chunk := make([]byte, 1<<20)
		n, err := io.ReadFull(r, chunk)
		chunks = append(chunks, chunk[:n])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	return bytes.Join(chunks, nil), nil
}

// Limited is LimitedReader's reader.
type Limited struct {
	path        string
	r           io.Reader
	limit, read int64
	nul         error
}

// Refused is the error of a read past the limit or of a NUL byte, nil
// before one: a decoder over the reader may wrap it in its own words.
func (l *Limited) Refused() error {
	if l.nul != nil {
		return l.nul
	}
	if l.read > l.limit {
		return tooLarge(l.path, l.limit)
	}
	return nil
}

func (l *Limited) Read(p []byte) (int, error) {
	if l.nul != nil {
		return 0, l.nul
	}
	n, err := l.r.Read(p)
	if i := bytes.IndexByte(p[:n], 0); i >= 0 {
		l.nul = fmt.Errorf("%s: byte %d is NUL: not JSON or YAML text", l.path, l.read+int64(i))
		return 0, l.nul
	}
	l.read += int64(n)
	if err := l.Refused(); err != nil {
		return 0, err
	}
	return n, err
}

// LimitedReader reads r, a file named path, up to limit bytes; a read past
// it fails with an error naming the file and the limit, and so does a NUL
// byte, which no JSON or YAML text holds. When r is a file
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
