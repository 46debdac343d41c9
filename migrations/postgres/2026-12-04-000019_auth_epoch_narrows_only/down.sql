DROP TRIGGER memberships_changed ON memberships;
CREATE TRIGGER memberships_changed AFTER UPDATE ON memberships FOR EACH ROW
    WHEN (OLD.role IS DISTINCT FROM NEW.role
          OR OLD.case_id IS DISTINCT FROM NEW.case_id
          OR OLD.user_id IS DISTINCT FROM NEW.user_id)
    EXECUTE FUNCTION baton_auth_epoch_moves();

DROP TRIGGER memberships_ended ON memberships;
CREATE TRIGGER memberships_made_or_ended AFTER INSERT OR DELETE ON memberships FOR EACH ROW
    EXECUTE FUNCTION baton_auth_epoch_moves();

DROP TRIGGER users_changed ON users;
CREATE TRIGGER users_changed AFTER UPDATE ON users FOR EACH ROW
    WHEN (OLD.deactivated_at IS DISTINCT FROM NEW.deactivated_at
          OR OLD.admin IS DISTINCT FROM NEW.admin
          OR OLD.name IS DISTINCT FROM NEW.name
          OR OLD.color IS DISTINCT FROM NEW.color)
    EXECUTE FUNCTION baton_auth_epoch_moves();
