-- Niche access levels, second step (owner: niche). Runs after the store
-- filled niche_evaluations.sp (0008).
--
-- The full-text index of published evaluations gets the column sp:
-- preview-level queries are restricted to {st sp}, full-level ones to
-- {st sb sc}. niche_search, the compact copy of what a search reads of each
-- published row, gets sp too; its signal count is gone (listings read
-- niche_evaluations.signal_count). The update triggers name the columns
-- they copy, so recounting signal_count re-indexes nothing. niche_terms is counted
-- again from the new index's vocabulary (sp included).
CREATE VIRTUAL TABLE niche_fts USING fts5(
    st, sp, sb, sc,
    content = 'niche_evaluations',
    content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO niche_fts (rowid, st, sp, sb, sc)
    SELECT seq, st, sp, sb, sc FROM niche_evaluations WHERE status = 'published';
CREATE TRIGGER niche_fts_insert AFTER INSERT ON niche_evaluations WHEN new.status = 'published' BEGIN
    INSERT INTO niche_fts (rowid, st, sp, sb, sc) VALUES (new.seq, new.st, new.sp, new.sb, new.sc);
END;
CREATE TRIGGER niche_fts_delete AFTER DELETE ON niche_evaluations WHEN old.status = 'published' BEGIN
    INSERT INTO niche_fts (niche_fts, rowid, st, sp, sb, sc) VALUES ('delete', old.seq, old.st, old.sp, old.sb, old.sc);
END;
CREATE TRIGGER niche_fts_update AFTER UPDATE OF status, st, sp, sb, sc ON niche_evaluations BEGIN
    INSERT INTO niche_fts (niche_fts, rowid, st, sp, sb, sc)
        SELECT 'delete', old.seq, old.st, old.sp, old.sb, old.sc WHERE old.status = 'published';
    INSERT INTO niche_fts (rowid, st, sp, sb, sc)
        SELECT new.seq, new.st, new.sp, new.sb, new.sc WHERE new.status = 'published';
END;

CREATE TABLE niche_search (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    score INTEGER NOT NULL,
    updated_at BIGINT NOT NULL,
    category_key TEXT NOT NULL,
    st TEXT NOT NULL,
    sp TEXT NOT NULL,
    sb TEXT NOT NULL,
    sc TEXT NOT NULL,
    title TEXT NOT NULL,
    problem TEXT NOT NULL,
    buyer TEXT NOT NULL,
    category TEXT NOT NULL,
    score_version TEXT NOT NULL
);
INSERT INTO niche_search (seq, id, score, updated_at, category_key, st, sp, sb, sc, title, problem, buyer, category,
        score_version)
    SELECT seq, id, score, updated_at, category_key, st, sp, sb, sc, title, problem, buyer, category, score_version
    FROM niche_evaluations WHERE status = 'published';
CREATE TRIGGER niche_search_insert AFTER INSERT ON niche_evaluations WHEN new.status = 'published' BEGIN
    INSERT INTO niche_search (seq, id, score, updated_at, category_key, st, sp, sb, sc, title, problem, buyer, category,
            score_version)
        VALUES (new.seq, new.id, new.score, new.updated_at, new.category_key, new.st, new.sp, new.sb, new.sc, new.title,
            new.problem, new.buyer, new.category, new.score_version);
END;
CREATE TRIGGER niche_search_delete AFTER DELETE ON niche_evaluations WHEN old.status = 'published' BEGIN
    DELETE FROM niche_search WHERE seq = old.seq;
END;
CREATE TRIGGER niche_search_update AFTER UPDATE OF status, score, updated_at, category_key, st, sp, sb, sc, title, problem,
        buyer, category, score_version ON niche_evaluations BEGIN
    DELETE FROM niche_search WHERE seq = old.seq;
    INSERT INTO niche_search (seq, id, score, updated_at, category_key, st, sp, sb, sc, title, problem, buyer, category,
            score_version)
        SELECT new.seq, new.id, new.score, new.updated_at, new.category_key, new.st, new.sp, new.sb, new.sc, new.title,
            new.problem, new.buyer, new.category, new.score_version
        WHERE new.status = 'published';
END;

DELETE FROM niche_terms;
CREATE VIRTUAL TABLE temp.niche_fts_vocab USING fts5vocab(main, niche_fts, row);
INSERT INTO niche_terms (term, docs) SELECT term, doc FROM temp.niche_fts_vocab;
DROP TABLE temp.niche_fts_vocab;
INSERT INTO niche_terms (term, docs) SELECT '', count(*) FROM niche_search;
DELETE FROM niche_terms WHERE docs = 0;
