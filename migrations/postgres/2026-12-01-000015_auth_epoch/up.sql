-- The auth epoch: one row whose number moves in the same transaction as
-- anything that could end or narrow a caller's access (a token revoked or
-- deleted while live, a user removed or made or unmade a site admin, a
-- membership made, changed or ended) or change how a lock frame names them
-- (a user's name or colour). Each instance keeps the callers its fast path
-- has checked in memory with the epoch they were read under
-- (src/locks/fast_path/callers.rs); a fast statement goes ahead only while
-- the epoch is still that one, so a revocation on any instance reaches
-- every other at its next statement. Triggers move it, so every writer
-- does, the previous release and an operator's SQL included.
CREATE TABLE auth_epoch (
    id BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (id),
    epoch BIGINT NOT NULL
);
INSERT INTO auth_epoch (id, epoch) VALUES (TRUE, 1);

CREATE FUNCTION baton_auth_epoch_moves() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE auth_epoch SET epoch = epoch + 1;
    RETURN NULL;
END $fn$;

CREATE TRIGGER auth_tokens_ended AFTER UPDATE ON auth_tokens FOR EACH ROW
    WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
          OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
          OR OLD.user_id IS DISTINCT FROM NEW.user_id)
    EXECUTE FUNCTION baton_auth_epoch_moves();
-- Pruning deletes expired tokens, which no statement accepts anyway.
CREATE TRIGGER auth_tokens_deleted AFTER DELETE ON auth_tokens FOR EACH ROW
    WHEN (OLD.revoked_at IS NULL AND OLD.expires_at > (now() AT TIME ZONE 'UTC'))
    EXECUTE FUNCTION baton_auth_epoch_moves();

CREATE TRIGGER users_changed AFTER UPDATE ON users FOR EACH ROW
    WHEN (OLD.deactivated_at IS DISTINCT FROM NEW.deactivated_at
          OR OLD.admin IS DISTINCT FROM NEW.admin
          OR OLD.name IS DISTINCT FROM NEW.name
          OR OLD.color IS DISTINCT FROM NEW.color)
    EXECUTE FUNCTION baton_auth_epoch_moves();
CREATE TRIGGER users_deleted AFTER DELETE ON users FOR EACH ROW
    EXECUTE FUNCTION baton_auth_epoch_moves();

CREATE TRIGGER memberships_made_or_ended AFTER INSERT OR DELETE ON memberships FOR EACH ROW
    EXECUTE FUNCTION baton_auth_epoch_moves();
CREATE TRIGGER memberships_changed AFTER UPDATE ON memberships FOR EACH ROW
    WHEN (OLD.role IS DISTINCT FROM NEW.role
          OR OLD.case_id IS DISTINCT FROM NEW.case_id
          OR OLD.user_id IS DISTINCT FROM NEW.user_id)
    EXECUTE FUNCTION baton_auth_epoch_moves();
