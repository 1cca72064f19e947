-- Search index version, second step (owner: niche). The engine's
-- in-memory search index holds the published evaluations' signal counts
-- (previews show them), so niche_version.v grows when one changes too:
-- niche_search does not copy signal_count (0009), so 0014's triggers do
-- not see it. (PostgreSQL's 0014 trigger already fires on every
-- statement changing niche_evaluations.)
CREATE TRIGGER niche_version_counts AFTER UPDATE OF signal_count ON niche_evaluations
    WHEN new.status = 'published' AND new.signal_count <> old.signal_count BEGIN
    UPDATE niche_version SET v = v + 1 WHERE id = 1;
END;
