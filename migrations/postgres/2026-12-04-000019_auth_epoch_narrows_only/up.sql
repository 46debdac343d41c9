-- The auth epoch moves only for what can end or narrow someone's access:
-- a live token revoked or deleted, a user removed or unmade a site admin, a
-- membership ended, moved or given a lower role. A rename, a new colour, a
-- new membership or a higher role no longer moves it (each flushed every
-- instance's callers): the fast statements read the holder's name and
-- colour from `users` themselves, and a caller read before a membership was
-- made or raised only declines once on the fast path (the general path
-- answers, and the caller is read again). The previous release reads no
-- epoch: its instances are untouched by these triggers.
DROP TRIGGER users_changed ON users;
CREATE TRIGGER users_changed AFTER UPDATE ON users FOR EACH ROW
    WHEN (OLD.deactivated_at IS DISTINCT FROM NEW.deactivated_at
          OR (OLD.admin AND NOT NEW.admin))
    EXECUTE FUNCTION baton_auth_epoch_moves();

DROP TRIGGER memberships_made_or_ended ON memberships;
CREATE TRIGGER memberships_ended AFTER DELETE ON memberships FOR EACH ROW
    EXECUTE FUNCTION baton_auth_epoch_moves();

-- A role not known here counts as the lowest, so a change to it moves the
-- epoch.
DROP TRIGGER memberships_changed ON memberships;
CREATE TRIGGER memberships_changed AFTER UPDATE ON memberships FOR EACH ROW
    WHEN (OLD.case_id IS DISTINCT FROM NEW.case_id
          OR OLD.user_id IS DISTINCT FROM NEW.user_id
          OR (OLD.role IS DISTINCT FROM NEW.role
              AND (CASE NEW.role WHEN 'manager' THEN 3 WHEN 'editor' THEN 2 WHEN 'reader' THEN 1 ELSE 0 END)
                < (CASE OLD.role WHEN 'manager' THEN 3 WHEN 'editor' THEN 2 WHEN 'reader' THEN 1 ELSE 4 END)))
    EXECUTE FUNCTION baton_auth_epoch_moves();
