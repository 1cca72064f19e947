package niche

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/internal/ids"
)

// Bulk import reads JSON Lines: one object per line, blank lines ignored.
// Each object has a "type":
//
//	{"type":"signal", <SignalInput fields: id, kind, sourceUrl, origin, externalId,
//	  title, excerpt, observedAt, collectedAt, license, attribution, engagement, state>}
//	{"type":"draft", "operationId":"…", "actor":"…", "reason":"…", "draft":{<NicheDraft>}}
//
// Drafts link signals by id, either stored ones or signals of the same
// file (which then carry an "id"). Drafts are created in file order with
// their operation id, so importing the same file again stores nothing new:
// signals come back as duplicates and drafts as replays.
//
// Speed. With a store that is a BulkCreator (store/nichestore) drafts are
// created importBatch at a time (the first batches smaller), each
// batch in one transaction (COPY on PostgreSQL), the next batch checked
// while the store writes one; every
// draft gets exactly Create's checks and outcome (replays and operation
// conflicts first, linked signals, captures, the floor, the revision log,
// accepted pending signals). A batch the store refuses as a whole (an
// operation or a rejection committed meanwhile by someone else) is
// created one draft at a time, which reports each line. An import
// interrupted after some batches is completed by importing the file
// again: the committed batches are replays. Other stores get one Create
// per draft.

// MaxImportLineBytes bounds one line of a bulk import.
const MaxImportLineBytes = 1 << 20

// ImportOptions configure Import. Nil means defaults.
type ImportOptions struct {
	// Actor is recorded on drafts that name none. Empty means "import".
	Actor string
	// MaxLines bounds the file (every line is checked before anything is
	// stored, so the whole file is held in memory: about 2 KB per draft).
	// Zero means 1,000,000.
	MaxLines int
}

// ImportReport says what an import did.
type ImportReport struct {
	SignalsCreated    int          `json:"signalsCreated"`
	SignalsDuplicate  int          `json:"signalsDuplicate"`
	DraftsCreated     int          `json:"draftsCreated"`
	DraftsReplayed    int          `json:"draftsReplayed"`
	DraftsFailed      int          `json:"draftsFailed"`
	Lines             []ImportLine `json:"lines"`
	PublishedNiches   int          `json:"publishedNiches"`
	UnpublishedNiches int          `json:"unpublishedNiches"`
}

// ImportLine is the outcome of one line.
type ImportLine struct {
	Line int    `json:"line"`
	Type string `json:"type"`
	// ID is the stored signal or evaluation id.
	ID string `json:"id,omitempty"`
	// Outcome is created, duplicate, replayed or failed.
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
}

type importSignal struct {
	Type string `json:"type"`
	SignalInput
}

type importDraft struct {
	Type        string `json:"type"`
	OperationID string `json:"operationId"`
	Actor       string `json:"actor"`
	Reason      string `json:"reason"`
	Draft       *Draft `json:"draft"`
}

type parsedLine struct {
	line   int
	signal *Signal
	op     Op
	draft  Draft
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// Import reads a JSON Lines file of signals and drafts. Every line is
// checked first — syntax, field rules, links to signals, the publication
// floor of drafts to publish — and if any line is wrong nothing is stored
// and an *ImportError lists every bad line. Then signals are stored
// (deduplicated) and drafts created in order; a draft that fails at that
// stage (for example because a signal was rejected meanwhile, or because
// its pages could not be captured and the floor counts captured signals
// only) is reported in its line and the others still proceed.
func (e *Engine) Import(ctx context.Context, r io.Reader, opts *ImportOptions) (*ImportReport, error) {
	var o ImportOptions
	if opts != nil {
		o = *opts
	}
	if o.Actor == "" {
		o.Actor = "import"
	}
	if o.MaxLines <= 0 {
		o.MaxLines = 1_000_000
	}
	im := &importer{e: e, o: o, now: e.now(), fileSig: map[string]Signal{}, fileKey: map[string]string{},
		keys: map[string]string{}}
	if err := im.parse(r); err != nil {
		return nil, err
	}
	known, err := im.checkStored(ctx)
	if err != nil {
		return nil, err
	}
	im.checkDrafts(known)
	if len(im.bad) > 0 {
		sortLineErrors(im.bad)
		return nil, &ImportError{Lines: im.bad}
	}
	rep := &ImportReport{Lines: []ImportLine{}}
	remap, err := im.storeSignals(ctx, rep)
	if err != nil {
		return rep, err
	}
	if err := im.createDrafts(ctx, rep, remap); err != nil {
		return rep, err
	}
	sortImportLines(rep.Lines)
	return rep, nil
}

// importer holds the state of one Import: the parsed lines, the signals of
// the file and the bad lines found so far.
type importer struct {
	e       *Engine
	o       ImportOptions
	now     time.Time
	lines   []parsedLine
	bad     []LineError
	fileSig map[string]Signal // by id
	fileKey map[string]string // origin \x00 externalId → id
	keys    map[string]string // page keys by URL (pageKey), for the floor
}

// pageKey is the engine's pageKey, memoised: the floor of every draft
// keys the pages of its signals, a few thousand URLs for a whole file.
func (im *importer) pageKey(url string) string {
	k, ok := im.keys[url]
	if !ok {
		k = pageKey(url)
		im.keys[url] = k
	}
	return k
}

func (im *importer) fail(line int, format string, args ...any) {
	im.bad = append(im.bad, LineError{Line: line, Reason: fmt.Sprintf(format, args...)})
}

// parse reads every line, recording the good ones and the bad ones: the
// lines are read first, decoded and checked on every core (each line on
// its own), then the signals' identities are checked against each other
// in file order.
func (im *importer) parse(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), MaxImportLineBytes)
	type rawLine struct {
		n   int
		raw []byte
	}
	var raws []rawLine
	n := 0
	for sc.Scan() {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if len(raws) >= im.o.MaxLines {
			im.fail(n, "the file has more than %d records", im.o.MaxLines)
			break
		}
		raws = append(raws, rawLine{n, bytes.Clone(raw)})
	}
	if err := sc.Err(); err != nil {
		if !errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("niche: import: read: %w", err)
		}
		im.fail(n+1, "line longer than %d bytes", MaxImportLineBytes)
	}
	decoded := make([]decodedLine, len(raws))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for k := range workers {
		wg.Go(func() {
			for i := k; i < len(raws); i += workers {
				decoded[i] = im.decode(raws[i].n, raws[i].raw)
				raws[i].raw = nil
			}
		})
	}
	wg.Wait()
	for _, d := range decoded {
		switch {
		case d.err != "":
			im.fail(d.line.line, "%s", d.err)
		case d.line.signal != nil:
			im.addSignal(d)
		default:
			im.lines = append(im.lines, d.line)
		}
	}
	return nil
}

// decodedLine is one line decoded and checked on its own: the parsed line,
// or err.
type decodedLine struct {
	line  parsedLine
	hasID bool // a signal line that names its id
	err   string
}

// decode decodes and checks line n (safe for concurrent use).
func (im *importer) decode(n int, raw []byte) decodedLine {
	if typ, ok := sniffType(raw); ok {
		if d := im.decodeAs(n, raw, typ, true); d.err == "" {
			return d
		}
		// A bad line: reported as without sniffType, word for word.
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return decodedLine{line: parsedLine{line: n}, err: fmt.Sprintf("not a JSON object: %v", err)}
	}
	return im.decodeAs(n, raw, head.Type, false)
}

// sniffType returns the type of a line written as most are, beginning
// {"type":"signal" or {"type":"draft" followed by a comma or the closing
// brace, without decoding it: decoding the whole line once for its type
// and again into its struct cost a third of the import's decoding.
// decodeAs then checks the struct's own Type against it, since a later
// "type" key would win.
func sniffType(raw []byte) (string, bool) {
	for _, t := range [...]string{"draft", "signal"} {
		rest, ok := bytes.CutPrefix(raw, []byte(`{"type":"`+t+`"`))
		if ok && len(rest) > 0 && (rest[0] == ',' || rest[0] == '}') {
			return t, true
		}
	}
	return "", false
}

// decodeAs decodes and checks line n as a line of type typ; when the
// decoded line names another type (a repeated "type" key, of which the
// last wins) and again is set, it decodes it as that one.
func (im *importer) decodeAs(n int, raw []byte, typ string, again bool) decodedLine {
	d := decodedLine{line: parsedLine{line: n}}
	switch typ {
	case "signal":
		var in importSignal
		if err := decodeStrict(raw, &in); err != nil {
			d.err = fmt.Sprintf("signal: %v", err)
			return d
		}
		if in.Type != typ && again {
			return im.decodeAs(n, raw, in.Type, false)
		}
		s, err := normalizeSignal(in.SignalInput, "", im.now)
		if err != nil {
			d.err = fmt.Sprintf("signal: %v", err)
			return d
		}
		d.line.signal, d.hasID = &s, in.ID != ""
	case "draft":
		var in importDraft
		if err := decodeStrict(raw, &in); err != nil {
			d.err = fmt.Sprintf("draft: %v", err)
			return d
		}
		if in.Type != typ && again {
			return im.decodeAs(n, raw, in.Type, false)
		}
		if in.Draft == nil {
			d.err = "draft: the \"draft\" object is required"
			return d
		}
		if in.OperationID == "" {
			d.err = "draft: operationId is required (it makes re-imports idempotent)"
			return d
		}
		op, err := Op{ID: in.OperationID, Actor: cmp.Or(in.Actor, im.o.Actor), Reason: in.Reason}.normalize()
		if err != nil {
			d.err = fmt.Sprintf("draft: %v", err)
			return d
		}
		dr, err := in.Draft.Normalize()
		if err != nil {
			d.err = fmt.Sprintf("draft: %v", err)
			return d
		}
		d.line.op, d.line.draft = op, dr
	default:
		d.err = fmt.Sprintf("type must be \"signal\" or \"draft\", not %q", typ)
	}
	return d
}

// addSignal records a decoded signal line, refusing one whose identity
// clashes with an earlier signal of the file.
func (im *importer) addSignal(d decodedLine) {
	n, s := d.line.line, *d.line.signal
	key := s.Origin + "\x00" + s.ExternalID
	if prev, ok := im.fileKey[key]; ok && d.hasID && prev != s.ID {
		im.fail(n, "signal: origin %q externalId %q already appears with id %s", s.Origin, s.ExternalID, prev)
		return
	}
	if prev, ok := im.fileSig[s.ID]; ok && prev.Origin+"\x00"+prev.ExternalID != key {
		im.fail(n, "signal: id %s already used by another signal of the file", s.ID)
		return
	}
	if _, ok := im.fileKey[key]; !ok {
		im.fileKey[key] = s.ID
	}
	im.fileSig[s.ID] = s
	im.lines = append(im.lines, d.line)
}

// checkStored refuses signals of the file whose id is stored for another
// item (same id must mean the same item) and returns every signal the
// drafts link that is known: stored ones, else the file's.
func (im *importer) checkStored(ctx context.Context) (map[string]Signal, error) {
	givenIDs := make([]string, 0, len(im.fileSig))
	for id := range im.fileSig {
		givenIDs = append(givenIDs, id)
	}
	stored, err := im.e.st.Signals(ctx, givenIDs)
	if err != nil {
		return nil, err
	}
	var external []string
	for _, l := range im.lines {
		if l.signal == nil {
			for _, id := range l.draft.SignalIDs {
				if _, ok := im.fileSig[id]; !ok {
					external = append(external, id)
				}
			}
			continue
		}
		if s, ok := stored[l.signal.ID]; ok && (s.Origin != l.signal.Origin || s.ExternalID != l.signal.ExternalID) {
			im.fail(l.line, "signal: id %s is already stored for origin %q externalId %q", s.ID, s.Origin, s.ExternalID)
		}
	}
	slices.Sort(external)
	known, err := im.e.st.Signals(ctx, slices.Compact(external))
	if err != nil {
		return nil, err
	}
	for id, s := range im.fileSig {
		if st, ok := stored[id]; ok {
			known[id] = st
		} else {
			known[id] = s
		}
	}
	return known, nil
}

// checkDrafts checks that every linked signal is known and usable, and
// that drafts to publish meet the floor as far as it can be known before
// their pages are captured (every page counted).
func (im *importer) checkDrafts(known map[string]Signal) {
	for _, l := range im.lines {
		if l.signal != nil {
			continue
		}
		var refErr SignalRefError
		for _, id := range l.draft.SignalIDs {
			s, ok := known[id]
			switch {
			case !ok:
				refErr.Unknown = append(refErr.Unknown, id)
			case s.State == StateRejected:
				refErr.Rejected = append(refErr.Rejected, id)
			}
		}
		if len(refErr.Unknown)+len(refErr.Rejected) > 0 {
			im.fail(l.line, "draft: %v", &refErr)
			continue
		}
		if l.draft.Publish {
			if err := im.e.floorKeyed(l.draft.SignalIDs, known, false, im.pageKey); err != nil {
				im.fail(l.line, "draft: %v", err)
			}
		}
	}
}

// storeSignals stores the file's signals in batches and returns the ids
// of the file that are stored under another id (duplicates).
func (im *importer) storeSignals(ctx context.Context, rep *ImportReport) (map[string]string, error) {
	remap := map[string]string{}
	var batch []Signal
	var batchLines []int
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := im.e.putSignals(ctx, batch)
		if err != nil {
			return err
		}
		for i, r := range res {
			il := ImportLine{Line: batchLines[i], Type: "signal", ID: r.ID, Outcome: r.Outcome}
			if r.Outcome == "created" {
				rep.SignalsCreated++
			} else {
				rep.SignalsDuplicate++
				if r.ID != batch[i].ID {
					remap[batch[i].ID] = r.ID
					il.Reason = "the same origin and externalId is stored under this id"
				}
			}
			rep.Lines = append(rep.Lines, il)
		}
		batch, batchLines = batch[:0], batchLines[:0]
		return nil
	}
	for _, l := range im.lines {
		if l.signal == nil {
			continue
		}
		batch = append(batch, *l.signal)
		batchLines = append(batchLines, l.line)
		if len(batch) == im.e.opts.MaxSignalBatch {
			if err := flush(); err != nil {
				return remap, err
			}
		}
	}
	return remap, flush()
}

// importBatch is how many drafts Import creates per transaction when the
// store is a BulkCreator, after a first batch of importFirstBatch and
// batches twice as large as the one before up to importBatch. Each batch
// writes into every page of the indexes keyed by random ids (the
// evaluations' ids, the links), so the fewer the batches the fewer times
// those pages are written: 25,000 rather than 10,000 took a tenth off a
// 100,000-draft import into SQLite. The first batch is smaller so that
// the store begins writing sooner (it is prepared before any write; the
// others are prepared while the store writes the one before), and the
// next ones double up to importBatch, so that each is prepared in less
// time than the store takes to write the one before (preparing a batch
// took about two fifths of writing it into SQLite): after a first batch
// of 5,000 a second of 25,000 left the writer waiting for a third of a
// second.
const (
	importBatch      = 25000
	importFirstBatch = 5000
)

// createDrafts creates the file's drafts in order, each with its
// operation id; a failure is reported in the draft's line. With a
// BulkCreator they are created importBatch at a time (the first batches
// smaller), each batch in one transaction; a batch the store
// refuses as a whole (an operation recorded meanwhile, a signal rejected
// meanwhile) is created one by one, which reports each line's outcome.
func (im *importer) createDrafts(ctx context.Context, rep *ImportReport, remap map[string]string) error {
	var drafts []parsedLine
	for _, l := range im.lines {
		if l.signal != nil {
			continue
		}
		l.draft.SignalIDs = slices.Clone(l.draft.SignalIDs)
		for i, id := range l.draft.SignalIDs {
			if to, ok := remap[id]; ok {
				l.draft.SignalIDs[i] = to
			}
		}
		drafts = append(drafts, l)
	}
	bc, bulk := im.e.st.(BulkCreator)
	if !bulk {
		for _, l := range drafts {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := im.createOne(ctx, rep, l); err != nil {
				return err
			}
		}
		return nil
	}
	// A pipeline of two: each batch is prepared (checked, its records
	// built, and with a BulkPreparer its rows) while the store writes the
	// one before.
	var inflight chan error
	var prev *batchWrites
	finish := func() error {
		if inflight == nil {
			return nil
		}
		err := im.finishBatch(ctx, rep, prev, <-inflight)
		inflight, prev = nil, nil
		return err
	}
	defer func() { _ = finish() }()
	bp, _ := bc.(BulkPreparer)
	size := importFirstBatch
	for start, end := 0, 0; start < len(drafts); start = end {
		if err := ctx.Err(); err != nil {
			return err
		}
		end = min(start+size, len(drafts))
		size = min(2*size, importBatch)
		b, err := im.prepareBatch(ctx, rep, bc, drafts[start:end])
		if err != nil {
			return err
		}
		// The store's rows of this batch are built while it writes the
		// previous one, when it can build them apart.
		write := func() error { return bc.CreateEvaluations(ctx, b.writes) }
		if bp != nil && len(b.writes) > 0 {
			p, err := bp.PrepareEvaluations(b.writes)
			write = func() error {
				if err != nil {
					return err
				}
				return p.Write(ctx)
			}
		}
		if err := finish(); err != nil {
			return err
		}
		if len(b.writes) > 0 {
			inflight, prev = make(chan error, 1), b
			go func() { inflight <- write() }()
		}
	}
	return finish()
}

// batchWrites are a batch's creations ready for the store, and their
// lines.
type batchWrites struct {
	writes []Write
	lines  []parsedLine
}

// createOne creates one draft through Engine.Create and reports it.
func (im *importer) createOne(ctx context.Context, rep *ImportReport, l parsedLine) error {
	ev, replayed, err := im.e.create(ctx, l.op, l.draft)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		im.report(rep, l, "", "", err)
	case replayed:
		im.report(rep, l, ev.ID, ev.Status, nil, "replayed")
	default:
		im.report(rep, l, ev.ID, ev.Status, nil, "created")
	}
	return nil
}

// report adds a draft line's outcome to rep: failed with err, else
// outcome[0] (created or replayed) for evaluation id in status.
func (im *importer) report(rep *ImportReport, l parsedLine, id string, status Status, err error, outcome ...string) {
	il := ImportLine{Line: l.line, Type: "draft"}
	switch {
	case err != nil:
		rep.DraftsFailed++
		il.Outcome, il.Reason = "failed", err.Error()
	case outcome[0] == "replayed":
		rep.DraftsReplayed++
		il.ID, il.Outcome = id, "replayed"
	default:
		rep.DraftsCreated++
		il.ID, il.Outcome = id, "created"
	}
	if err == nil {
		if status == StatusPublished {
			rep.PublishedNiches++
		} else {
			rep.UnpublishedNiches++
		}
	}
	rep.Lines = append(rep.Lines, il)
}

// prepareBatch makes the checks Create makes on the drafts of lines (at
// most importBatch) — replays and operation conflicts first, then the
// linked signals, the captures of their pages and the floor — reporting
// the lines they settle, and returns the creations of the others.
func (im *importer) prepareBatch(ctx context.Context, rep *ImportReport, bc BulkCreator, lines []parsedLine) (*batchWrites, error) {
	e := im.e
	opIDs := make([]string, len(lines))
	for i, l := range lines {
		opIDs[i] = l.op.ID
	}
	refs, err := bc.Operations(ctx, opIDs)
	if err != nil {
		return nil, err
	}
	var todo []parsedLine
	var union []string
	for _, l := range lines {
		ref, ok := refs[l.op.ID]
		switch {
		case !ok:
			todo = append(todo, l)
			union = append(union, l.draft.SignalIDs...)
		case ref.RequestHash == requestHash(ActionCreate, "", 0, &l.draft, l.op):
			im.report(rep, l, ref.NicheID, ref.Status, nil, "replayed")
		default:
			im.report(rep, l, "", "", ErrOperationConflict)
		}
	}
	b := &batchWrites{}
	if len(todo) == 0 {
		return b, nil
	}
	slices.Sort(union)
	union = slices.Compact(union)
	signals, err := e.st.Signals(ctx, union)
	if err != nil {
		return nil, err
	}
	if err := e.captureLinked(ctx, signals, union); err != nil {
		for _, l := range todo {
			im.report(rep, l, "", "", err)
		}
		return b, nil
	}
	now := e.now()
	for _, l := range todo {
		d := l.draft
		pending, err := linkable(d.SignalIDs, signals)
		if err != nil {
			im.report(rep, l, "", "", err)
			continue
		}
		rec := Record{ID: ids.New(ids.Niche), Status: StatusDraft, Revision: 1, CreatedAt: now, UpdatedAt: now}
		e.applyDraft(ctx, &rec, d, l.op.Actor, now)
		if d.Publish {
			if err := e.floorKeyed(d.SignalIDs, signals, e.capturedOnly(), im.pageKey); err != nil {
				im.report(rep, l, "", "", err)
				continue
			}
			rec.Status, rec.PublishedAt = StatusPublished, now
		}
		b.writes = append(b.writes, Write{OperationID: l.op.ID, RequestHash: requestHash(ActionCreate, "", 0, &d, l.op),
			Record: rec, Action: ActionCreate, Actor: l.op.Actor, Reason: l.op.Reason, At: now,
			Accept: pending, CheckSignals: true})
		b.lines = append(b.lines, l)
	}
	return b, nil
}

// finishBatch reports the outcome of the store's write of b (err): every
// line created, or, when the store refused the batch as a whole (an
// operation recorded meanwhile, a signal rejected meanwhile), each draft
// created one by one, which reports each line's outcome.
func (im *importer) finishBatch(ctx context.Context, rep *ImportReport, b *batchWrites, err error) error {
	e := im.e
	defer e.cache.invalidate()
	writes, written := b.writes, b.lines
	if err == nil {
		created := make([]string, len(writes))
		for i, w := range writes {
			created[i] = w.Record.ID
			im.report(rep, written[i], w.Record.ID, w.Record.Status, nil, "created")
		}
		if e.index != nil {
			e.index.written(ctx, created...)
		}
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	e.log.DebugContext(ctx, "niche: import: a batch was refused as a whole; creating its drafts one by one", "drafts", len(written), "err", err)
	for _, l := range written {
		if err := im.createOne(ctx, rep, l); err != nil {
			return err
		}
	}
	return nil
}

func sortLineErrors(l []LineError) {
	slices.SortStableFunc(l, func(a, b LineError) int { return cmp.Compare(a.Line, b.Line) })
}

func sortImportLines(l []ImportLine) {
	slices.SortStableFunc(l, func(a, b ImportLine) int { return cmp.Compare(a.Line, b.Line) })
}

// ImportString is Import over a string (tests, small fixtures).
func (e *Engine) ImportString(ctx context.Context, jsonl string, opts *ImportOptions) (*ImportReport, error) {
	return e.Import(ctx, strings.NewReader(jsonl), opts)
}
