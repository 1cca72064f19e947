package wacz

import (
	"encoding/binary"
	"fmt"
	"time"
)

// ZIP record signatures and sizes (APPNOTE 4.3).
const (
	localSig      = 0x04034b50
	centralSig    = 0x02014b50
	descriptorSig = 0x08074b50
	endSig        = 0x06054b50
	localLen      = 30
	centralLen    = 46
	descriptorLen = 16
	endLen        = 22
	extTimeID     = 0x5455
)

// CheckFraming checks that the ZIP's framing is exactly what Writer
// writes, so that no byte of the file escapes a check: the contents of the
// entries are covered by datapackage.json (and it by the signature), and
// everything around them must be determined by those contents. It
// requires: entries stored uncompressed (Writer stores every entry),
// local headers contiguous from offset 0, each followed by its data and a
// signed data descriptor; every header field equal to the central
// directory's or to its one allowed value (version 2.0, flags 0x8, no
// comment, attributes 0); one extended-timestamp extra field per header
// whose time is modified (every entry's) and whose MS-DOS date and time
// encode it; the central directory right after the last entry; and the
// end record, without comment, ending the file. Archives of 4 GiB or more
// (ZIP64) are refused.
func (w *Reader) CheckFraming(modified time.Time) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: ZIP framing: "+format, append([]any{ErrLayout}, args...)...)
	}
	read := func(off, n int64) ([]byte, error) {
		if off < 0 || n < 0 || off+n > w.size {
			return nil, bad("a record at %d runs past the end of the file", off)
		}
		b := make([]byte, n)
		if _, err := w.ra.ReadAt(b, off); err != nil {
			return nil, bad("%v", err)
		}
		return b, nil
	}
	le16, le32 := binary.LittleEndian.Uint16, binary.LittleEndian.Uint32
	end, err := read(w.size-endLen, endLen)
	if err != nil {
		return err
	}
	n := int64(len(w.Z.File))
	cdSize, cdOff := int64(le32(end[12:])), int64(le32(end[16:]))
	if le32(end) != endSig || le16(end[4:]) != 0 || le16(end[6:]) != 0 || int64(le16(end[8:])) != n ||
		int64(le16(end[10:])) != n || le16(end[20:]) != 0 || cdOff+cdSize != w.size-endLen {
		return bad("the end record is not the plain one that ends the file")
	}
	wantDate, wantTime := uint16(modified.Day()+int(modified.Month())<<5+(modified.Year()-1980)<<9),
		uint16(modified.Second()/2+modified.Minute()<<5+modified.Hour()<<11)
	var extra [9]byte
	binary.LittleEndian.PutUint16(extra[0:], extTimeID)
	binary.LittleEndian.PutUint16(extra[2:], 5)
	extra[4] = 1
	binary.LittleEndian.PutUint32(extra[5:], uint32(modified.Unix()))
	var at, cd int64 = 0, cdOff
	for _, f := range w.Z.File {
		c, err := read(cd, centralLen)
		if err != nil {
			return err
		}
		nameLen, extraLen := int64(le16(c[28:])), int64(le16(c[30:]))
		tail, err := read(cd+centralLen, nameLen+extraLen)
		if err != nil {
			return err
		}
		csize, usize := int64(le32(c[20:])), int64(le32(c[24:]))
		switch {
		case le32(c) != centralSig || le16(c[4:]) != 20 || le16(c[6:]) != 20 || le16(c[8:]) != 0x8 || le16(c[10:]) != 0:
			return bad("entry %s: central header is not a stored entry of version 2.0 with a data descriptor", f.Name)
		case le16(c[12:]) != wantTime || le16(c[14:]) != wantDate || string(tail[nameLen:]) != string(extra[:]):
			return bad("entry %s: its time is not the bundle's (%s)", f.Name, modified.Format(time.RFC3339))
		case le16(c[32:]) != 0 || le16(c[34:]) != 0 || le16(c[36:]) != 0 || le32(c[38:]) != 0:
			return bad("entry %s: central header has a comment, a disk or attributes", f.Name)
		case int64(le32(c[42:])) != at || string(tail[:nameLen]) != f.Name || csize != usize:
			return bad("entry %s: not where the previous entry ends, or not stored", f.Name)
		}
		l, err := read(at, localLen+nameLen+extraLen)
		if err != nil {
			return err
		}
		if le32(l) != localSig || string(l[4:14]) != string(c[6:16]) || le32(l[14:]) != 0 || le32(l[18:]) != 0 ||
			le32(l[22:]) != 0 || le16(l[26:]) != uint16(nameLen) || le16(l[28:]) != uint16(extraLen) ||
			string(l[localLen:]) != string(tail) {
			return bad("entry %s: local header differs from the central directory", f.Name)
		}
		at += localLen + nameLen + extraLen + csize
		d, err := read(at, descriptorLen)
		if err != nil {
			return err
		}
		if le32(d) != descriptorSig || string(d[4:16]) != string(c[16:28]) {
			return bad("entry %s: data descriptor differs from the central directory", f.Name)
		}
		at += descriptorLen
		cd += centralLen + nameLen + extraLen
	}
	if at != cdOff || cd != cdOff+cdSize {
		return bad("bytes between the entries and the central directory, or inside it")
	}
	return nil
}
