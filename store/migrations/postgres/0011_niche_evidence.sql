-- Checkable evidence and reviewable scores (owner: niche; snapshot_holds:
-- snapshot).
--
-- Every signal keeps the latest capture of its page: snapshot_id and the
-- capture record as JSON (the EvidenceSnapshot fields), '' when never
-- captured or released. The partial index serves the release sweep
-- (niche.Engine.ReleaseEvidence), which reads only captured signals.
ALTER TABLE niche_signals ADD COLUMN snapshot_id TEXT NOT NULL DEFAULT '';
ALTER TABLE niche_signals ADD COLUMN snapshot TEXT NOT NULL DEFAULT '';
CREATE INDEX niche_signals_snapshot ON niche_signals (snapshot_id) WHERE snapshot_id <> '';

-- Evaluations: the per-criterion rationale (JSON, niche.Rationale) and the
-- last curator review (the last create, revise or publish of the log).
ALTER TABLE niche_evaluations ADD COLUMN rationale TEXT NOT NULL DEFAULT '{}';
ALTER TABLE niche_evaluations ADD COLUMN reviewed_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE niche_evaluations ADD COLUMN reviewed_by TEXT NOT NULL DEFAULT '';
UPDATE niche_evaluations SET
    reviewed_at = COALESCE((SELECT r.at FROM niche_revisions r WHERE r.niche_id = niche_evaluations.id
        AND r.action IN ('create', 'revise', 'publish') AND r.actor <> 'bulk load' ORDER BY r.revision DESC LIMIT 1), 0),
    reviewed_by = COALESCE((SELECT r.actor FROM niche_revisions r WHERE r.niche_id = niche_evaluations.id
        AND r.action IN ('create', 'revise', 'publish') AND r.actor <> 'bulk load' ORDER BY r.revision DESC LIMIT 1), '');

-- Snapshot records exempt from the retention purge (snapshot.HoldStore):
-- the niche catalogue holds its evidence captures while an evaluation
-- needs them.
CREATE TABLE snapshot_holds (
    snapshot_id TEXT PRIMARY KEY
);
