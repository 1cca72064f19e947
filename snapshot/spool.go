package snapshot

import (
	"bytes"
	"io"
	"os"
)

// spoolMemory is how much of a body is kept in memory before the rest is
// staged in a temporary file.
const spoolMemory = 256 << 10

// spool stages a response body: in memory while small, in a temporary
// file beyond spoolMemory. It is written once, then read from the start.
type spool struct {
	dir string
	mem bytes.Buffer
	f   *os.File
	n   int64
}

func (s *spool) Write(p []byte) (int, error) {
	if s.f == nil && s.mem.Len()+len(p) <= spoolMemory {
		s.n += int64(len(p))
		return s.mem.Write(p)
	}
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, "assay-spool-*")
		if err != nil {
			return 0, err
		}
		s.f = f
		if _, err := f.Write(s.mem.Bytes()); err != nil {
			return 0, err
		}
		s.mem = bytes.Buffer{}
	}
	n, err := s.f.Write(p)
	s.n += int64(n)
	return n, err
}

// Size is the number of bytes written.
func (s *spool) Size() int64 { return s.n }

// Reader returns a reader positioned at the start of the content.
func (s *spool) Reader() (io.ReadSeeker, error) {
	if s.f == nil {
		return bytes.NewReader(s.mem.Bytes()), nil
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return s.f, nil
}

// Bytes returns the whole content (for normalisation; bounded by the
// capture size limit).
func (s *spool) Bytes() ([]byte, error) {
	if s.f == nil {
		return s.mem.Bytes(), nil
	}
	r, err := s.Reader()
	if err != nil {
		return nil, err
	}
	b := make([]byte, s.n)
	_, err = io.ReadFull(r, b)
	return b, err
}

// Close discards the content.
func (s *spool) Close() error {
	s.mem = bytes.Buffer{}
	if s.f == nil {
		return nil
	}
	name := s.f.Name()
	err := s.f.Close()
	s.f = nil
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	return err
}
