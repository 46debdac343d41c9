DROP TRIGGER memberships_changed ON memberships;
DROP TRIGGER memberships_made_or_ended ON memberships;
DROP TRIGGER users_deleted ON users;
DROP TRIGGER users_changed ON users;
DROP TRIGGER auth_tokens_deleted ON auth_tokens;
DROP TRIGGER auth_tokens_ended ON auth_tokens;
DROP FUNCTION baton_auth_epoch_moves();
DROP TABLE auth_epoch;
